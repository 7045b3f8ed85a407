// Images from tools and resources are untrusted bytes: they are shown only as `data:` URLs of the
// raster types below (never SVG, which can carry script and links), which the CSP's
// `img-src 'self' data:` allows.
import type { ShownImage } from "../ipc";

export const IMAGE_TYPES = ["image/png", "image/jpeg", "image/gif", "image/webp"];

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** A `data:` URL for the image, or null when its type is not one shown or the data is not base64. */
export function imageSource(mimeType: string | null | undefined, data: string): string | null {
  const type = (mimeType ?? "").trim().toLowerCase();
  if (!IMAGE_TYPES.includes(type)) return null;
  const clean = data.replace(/\s+/g, "");
  if (clean === "" || !BASE64.test(clean)) return null;
  return `data:${type};base64,${clean}`;
}

/** How many bytes a base64 text holds. */
export function base64Bytes(data: string): number {
  const clean = data.replace(/\s+/g, "");
  const padding = clean.endsWith("==") ? 2 : clean.endsWith("=") ? 1 : 0;
  return Math.max(0, Math.floor((clean.length * 3) / 4) - padding);
}

/** The images of a tool's result, under the result; other types are named, not shown. */
export function ResultImages({ images, tool }: { images: ShownImage[]; tool: string }) {
  if (images.length === 0) return null;
  return (
    <div className="result-images" data-testid="result-images">
      {images.map((image, i) => {
        const src = imageSource(image.mimeType, image.data);
        return src ? (
          <img key={i} src={src} alt={`Image from ${tool}`} />
        ) : (
          <p key={i} className="muted small">
            An image of type {image.mimeType || "unknown"} ({base64Bytes(image.data).toLocaleString("en")} bytes), not
            shown.
          </p>
        );
      })}
    </div>
  );
}
