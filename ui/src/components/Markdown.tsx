import { memo } from "react";
import ReactMarkdown, { type Components } from "react-markdown";
import remarkGfm from "remark-gfm";

// Model text is untrusted. react-markdown builds React elements (never HTML strings), and without
// a raw-HTML plugin any HTML in the text (`<script>`, `<img onerror>`) stays text. Links and
// images are not rendered as such: in Tauri a followed link would load the page inside the app's
// window, and an image would fetch whatever the model (or a tool output it read) asked for. Both
// are shown as their text and address instead. Task-list checkboxes become symbols: a disabled
// checkbox without a label is only noise for a screen reader.
const components: Components = {
  a: ({ href, children }) => {
    const text = typeof children === "string" ? children : null;
    return (
      <>
        <span className="md-link">{children}</span>
        {href && href !== text && !href.startsWith("#") && (
          <>
            {" "}
            <span className="md-url">&lt;{href}&gt;</span>
          </>
        )}
      </>
    );
  },
  img: ({ src, alt }) => (
    <span className="md-image">
      [image{alt ? `: ${alt}` : ""}]{typeof src === "string" && src ? ` <${src}>` : ""}
    </span>
  ),
  input: ({ checked }) => (
    <span className="md-task" role="img" aria-label={checked ? "done" : "not done"}>
      {checked ? "☑" : "☐"}
    </span>
  ),
  table: ({ children }) => (
    <div className="md-table">
      <table>{children}</table>
    </div>
  ),
};

const plugins = [remarkGfm];

/** Markdown from the model, rendered safely; the same text parses to the same elements. */
export default memo(function Markdown({ text }: { text: string }) {
  return (
    <ReactMarkdown remarkPlugins={plugins} components={components}>
      {text}
    </ReactMarkdown>
  );
});
