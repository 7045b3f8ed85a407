//! The screenshot suite: every screen of the window and its states (a conversation, an empty
//! chat, an answer still being written, a request the provider refused, a search that finds
//! nothing, a dialog, the palette, a server starting and one that failed, a rule being written
//! and one not finished yet, each settings section), in the light look and the dark one. Each view is saved
//! to `artifacts/screens/<look>-<view>.png` and checked in the page as it is drawn, so a change
//! that breaks the look fails here, naming the view and the element:
//!
//! - no text below WCAG AA contrast against what is really behind it (4.5:1; 3:1 for large
//!   text), colours composed through every translucent layer;
//! - nothing sticks out of the window sideways and the page never scrolls sideways;
//! - no button's label is cut off;
//! - every icon is one size (`ICON_SIZE`, 16; `BADGE_ICON_SIZE`, 12, inside a badge) and hidden
//!   from screen readers.
//!
//! Pixels are not compared with stored pictures: fonts and antialiasing differ between machines
//! (a clean CI clone draws other pixels than this one), and such a test fails for nothing. The
//! pictures are kept for a person to look at; what makes a look broken is checked instead.

use std::time::Duration;

use anyhow::{Context, Result};
use fantoccini::{Client, Locator};

use toolgate_tests::fixtures::{anthropic, anthropic_stream};
use toolgate_tests::{Scripted, ScriptedProvider};

use super::{
    choose_theme, click, fill, press, save_screenshot, send_and_wait_for_approval, shell,
    wait_gone, wait_text,
};

/// Runs in the page: what is wrong with the look drawn now, one line each.
const AUDIT: &str = r#"
const problems = [];
const parse = (s) => {
  const m = /rgba?\(([^)]+)\)/.exec(s || "");
  if (!m) return null;
  const p = m[1].split(",").map((x) => parseFloat(x));
  return [p[0], p[1], p[2], p.length > 3 ? p[3] : 1];
};
const over = (top, under) => [0, 1, 2].map((i) => top[i] * top[3] + under[i] * (1 - top[3]));
const behind = (el) => {
  const layers = [];
  for (let e = el; e; e = e.parentElement) {
    const c = parse(getComputedStyle(e).backgroundColor);
    if (c && c[3] > 0) {
      layers.push(c);
      if (c[3] >= 1) break;
    }
  }
  let colour = [255, 255, 255];
  for (let i = layers.length - 1; i >= 0; i--) colour = over(layers[i], colour);
  return colour;
};
const luminance = (c) => {
  const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); };
  return 0.2126 * f(c[0]) + 0.7152 * f(c[1]) + 0.0722 * f(c[2]);
};
const name = (el) => {
  const id = el.getAttribute("data-testid") || el.id;
  const text = (el.textContent || "").trim().replace(/\s+/g, " ").slice(0, 40);
  return `${el.tagName.toLowerCase()}${id ? "[" + id + "]" : ""} "${text}"`;
};
const shown = (el) => {
  const r = el.getBoundingClientRect();
  if (r.width === 0 || r.height === 0) return false;
  for (let e = el; e; e = e.parentElement) {
    const s = getComputedStyle(e);
    if (s.visibility === "hidden" || s.display === "none" || parseFloat(s.opacity) < 1) return false;
    if (e.classList.contains("sr-only")) return false;
  }
  return true;
};
const clipped = (el) => {
  for (let e = el.parentElement; e; e = e.parentElement) {
    if (getComputedStyle(e).overflowX !== "visible") return true;
  }
  return false;
};
if (document.documentElement.scrollWidth > innerWidth + 1)
  problems.push(`the page scrolls sideways: ${document.documentElement.scrollWidth}px in ${innerWidth}px`);
for (const el of document.querySelectorAll("body *")) {
  if (el.closest("iframe, svg, option")) continue;
  const hasText = [...el.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim());
  if (hasText && shown(el) && !el.closest(":disabled")) {
    const s = getComputedStyle(el);
    const colour = parse(s.color);
    if (colour) {
      const back = behind(el);
      const front = over(colour, back);
      const [a, b] = [luminance(front), luminance(back)].sort((x, y) => y - x);
      const ratio = (a + 0.05) / (b + 0.05);
      const size = parseFloat(s.fontSize);
      const large = size >= 24 || (size >= 18.66 && parseInt(s.fontWeight, 10) >= 700);
      if (ratio < (large ? 3 : 4.5) - 0.005)
        problems.push(`contrast ${ratio.toFixed(2)}:1 for ${name(el)} (${s.color} on rgb(${back.map(Math.round).join(", ")}))`);
    }
  }
  const r = el.getBoundingClientRect();
  if (r.width > 0 && r.right > innerWidth + 1 && !clipped(el) && shown(el))
    problems.push(`${name(el)} sticks out of the window by ${Math.round(r.right - innerWidth)}px`);
  if (el.tagName === "BUTTON" && shown(el) && el.scrollWidth > el.clientWidth + 1)
    problems.push(`the label of ${name(el)} is cut off (${el.scrollWidth}px in ${el.clientWidth}px)`);
}
for (const icon of document.querySelectorAll("svg.lucide")) {
  if (!shown(icon)) continue;
  const want = icon.closest(".badge") ? "12" : "16";
  if (icon.getAttribute("width") !== want)
    problems.push(`an icon in ${name(icon.parentElement)} is ${icon.getAttribute("width")}px, not ${want}px`);
  if (icon.getAttribute("aria-hidden") !== "true") problems.push(`an icon in ${name(icon.parentElement)} is read out`);
}
return problems;
"#;

/// One view: drawn, checked, saved.
async fn shoot(c: &Client, look: &str, view: &str, problems: &mut Vec<String>) -> Result<()> {
    let shot = save_screenshot(c, &format!("screens/{look}-{view}.png")).await?;
    let found = c
        .execute(AUDIT, vec![])
        .await
        .context("checking the look")?;
    for p in found.as_array().into_iter().flatten() {
        problems.push(format!("{look} {view}: {}", p.as_str().unwrap_or_default()));
    }
    eprintln!("screen: {}", shot.display());
    Ok(())
}

/// The check finds each thing it looks for, in this WebKit: a faint text, a box wider than the
/// window, a cut-off label, an icon of another size read out. (Added to the page, checked,
/// removed.)
async fn the_check_finds_what_it_looks_for(c: &Client) -> Result<()> {
    let found = c
        .execute(
            &format!(
                "const box = document.createElement('div'); box.id = 'look-check'; \
                 box.innerHTML = '<p style=\"color:#8a8a8a;background:#999\">faint words</p>' + \
                 '<div style=\"position:fixed;left:0;top:0;height:2px;width:' + (innerWidth + 40) + 'px\"></div>' + \
                 '<button style=\"width:30px;white-space:nowrap;overflow:hidden\">a label too long</button>' + \
                 '<svg class=\"lucide\" width=\"99\" height=\"99\"></svg>'; \
                 document.body.appendChild(box); \
                 try {{ return (function () {{ {AUDIT} }})(); }} finally {{ box.remove(); }}"
            ),
            vec![],
        )
        .await
        .context("checking the check")?;
    let found: Vec<String> = serde_json::from_value(found)?;
    let all = found.join("\n");
    for wanted in [
        "contrast",
        "sticks out of the window",
        "is cut off",
        "is 99px, not 16px",
        "is read out",
    ] {
        anyhow::ensure!(all.contains(wanted), "the check missed “{wanted}”: {all}");
    }
    Ok(())
}

/// Fills the form of *Add server* and confirms: the server named `name` runs the misbehaving
/// test server with `arguments` (its mode first), with `env` (one `NAME=value`).
async fn add_with_the_form(c: &Client, name: &str, arguments: &str, env: &str) -> Result<()> {
    let command = format!(
        "python3 {} {arguments}",
        toolgate_tests::fault_server_script().display()
    );
    click(c, "[data-testid=add-server-button]").await?;
    click(c, "[data-testid=add-tab-form]").await?;
    fill(c, "#add-name", name).await?;
    fill(c, "#add-command", &command).await?;
    if !env.is_empty() {
        fill(c, "#add-pairs", env).await?;
    }
    click(c, "[data-testid=add-check]").await?;
    if let Err(e) = wait_text(c, "[data-testid=add-runs]", "fault_server.py", 10).await {
        let said = c
            .find(Locator::Css("[data-testid=add-server-dialog]"))
            .await?
            .text()
            .await?;
        anyhow::bail!("{e}; the dialog said: {said}");
    }
    click(c, "[data-testid=add-confirm]").await?;
    Ok(())
}

/// The states a server passes through that the rest of the suite goes by too fast: adding one
/// that takes seconds to start (the progress in place), and one that exits at once (the
/// failure in the dialog, then on its card).
async fn servers_slow_and_failed(c: &Client, look: &str, problems: &mut Vec<String>) -> Result<()> {
    let slow = format!("slow-{look}");
    // Each look adds its own pair: the look, an argument the server ignores, keeps the second
    // pair from being the same servers as the first.
    add_with_the_form(
        c,
        &slow,
        &format!("slow-start {look}"),
        "SLOW_START_SECONDS=8",
    )
    .await?;
    wait_text(c, "[data-testid=add-progress]", &slow, 10).await?;
    wait_text(c, "[data-testid=add-progress]", " s)", 5).await?;
    shoot(c, look, "add-server-progress", problems).await?;
    wait_gone(c, "[data-testid=add-server-dialog]", 60)
        .await
        .context("the dialog closed once the slow server started")?;

    let broken = format!("broken-{look}");
    add_with_the_form(c, &broken, &format!("exit-at-once {look}"), "").await?;
    wait_text(
        c,
        "[data-testid=add-server-dialog] [role=alert]",
        "did not start",
        60,
    )
    .await?;
    shoot(c, look, "add-server-failed", problems).await?;
    click(c, "[data-testid=add-server-close]").await?;
    wait_gone(c, "[data-testid=add-server-dialog]", 5).await?;
    click(c, &format!("[data-testid=server-row-{broken}]")).await?;
    wait_text(c, &format!("[data-testid=server-{broken}]"), "exit", 10).await?;
    shoot(c, look, "servers-failed", problems).await
}

/// The chat while an answer is still being written (the model sent its first words, then
/// nothing yet), stopped, and a request the provider refused.
async fn chat_writing_and_failed(
    c: &Client,
    provider: &ScriptedProvider,
    look: &str,
    problems: &mut Vec<String>,
) -> Result<()> {
    let mut events = vec![
        anthropic_stream::message_start(12),
        anthropic_stream::ping(),
    ];
    events.extend(anthropic_stream::text_block(
        0,
        &["Still ", "writing ", "this answer"],
    ));
    provider.push([Scripted::stream(events).stalling()]);
    fill(c, "#chat-input", "Write slowly").await?;
    click(c, "#chat-send").await?;
    wait_text(c, "[data-testid=messages]", "Still writing this answer", 20).await?;
    wait_text(c, "[data-testid=assistant-writing]", "Writing", 5).await?;
    wait_text(c, "#chat-stop", "Stop", 5).await?;
    shoot(c, look, "chat-writing", problems).await?;
    click(c, "#chat-stop").await?;
    wait_gone(c, "#chat-stop", 20).await?;
    // A stop is the user's own: said as such, not as an error, and the words so far stay.
    wait_text(
        c,
        "[data-testid=chat-notice]",
        "You stopped this answer",
        10,
    )
    .await?;
    wait_gone(c, "[data-testid=assistant-writing]", 5).await?;

    provider.push([Scripted::status(
        400,
        serde_json::json!({"type": "error", "error": {"type": "invalid_request_error",
            "message": "messages.1.content: the conversation is malformed"}}),
    )]);
    fill(c, "#chat-input", "One more").await?;
    click(c, "#chat-send").await?;
    wait_text(c, "[data-testid=chat-error]", "malformed", 20).await?;
    shoot(c, look, "chat-failed", problems).await
}

/// Every screen and state in both looks; fails listing every problem found.
pub(crate) async fn every_screen_in_both_looks(
    c: &Client,
    provider: &ScriptedProvider,
) -> Result<()> {
    the_check_finds_what_it_looks_for(c).await?;
    let mut problems = Vec::new();
    for look in ["light", "dark"] {
        shell::open_settings(c, "general").await?;
        choose_theme(c, look).await?;
        for section in ["general", "tools", "secrets", "import", "diagnostics"] {
            shell::open_settings(c, section).await?;
            tokio::time::sleep(Duration::from_millis(300)).await;
            shoot(c, look, &format!("settings-{section}"), &mut problems).await?;
        }

        click(c, "[data-testid=tab-chat]").await?;
        wait_text(c, "[data-testid=messages]", "", 10).await?;
        shoot(c, look, "chat", &mut problems).await?;
        press(c, "k", true).await?;
        wait_text(c, "[data-testid=command-palette]", "", 5).await?;
        shoot(c, look, "palette", &mut problems).await?;
        press(c, "Escape", false).await?;
        wait_gone(c, "[data-testid=command-palette]", 5).await?;
        let search = c.find(Locator::Css("#conversation-search")).await?;
        search.send_keys("no conversation says this").await?;
        wait_text(
            c,
            "[data-testid=conversation-search-result]",
            "No conversation matches",
            10,
        )
        .await?;
        shoot(c, look, "chat-search-nothing", &mut problems).await?;
        // Escape empties the search (WebDriver's clear() would not tell React).
        search.send_keys("\u{E00C}").await?;
        wait_text(c, "[data-testid=conversation]", "", 5).await?;

        click(c, "[data-testid=tab-servers]").await?;
        click(c, "[data-testid=server-row-everything]").await?;
        wait_text(c, "[data-testid=server-everything]", "", 10).await?;
        shoot(c, look, "servers", &mut problems).await?;
        click(c, "[data-testid=add-server-button]").await?;
        wait_text(c, "[data-testid=add-server-dialog]", "", 5).await?;
        // Each of its ways in, as it opens.
        for tab in ["wellKnown", "form", "json", "registry", "bundle"] {
            click(c, &format!("[data-testid=add-tab-{tab}]")).await?;
            tokio::time::sleep(Duration::from_millis(300)).await;
            shoot(c, look, &format!("add-server-{tab}"), &mut problems).await?;
        }
        click(c, "[data-testid=add-server-close]").await?;
        wait_gone(c, "[data-testid=add-server-dialog]", 5).await?;
        servers_slow_and_failed(c, look, &mut problems).await?;

        click(c, "[data-testid=tab-activity]").await?;
        wait_text(c, "[data-testid=audit-log]", "", 10).await?;
        shoot(c, look, "activity", &mut problems).await?;
        click(c, "[data-testid=new-rule]").await?;
        wait_text(c, "[data-testid=rule-editor]", "", 5).await?;
        shoot(c, look, "rule-editor", &mut problems).await?;
        click(c, "[data-testid=add-condition]").await?;
        wait_text(c, "[data-testid=rule-unfinished]", "", 5).await?;
        shoot(c, look, "rule-editor-unfinished", &mut problems).await?;
        c.find(Locator::XPath(
            "//*[@data-testid='rule-editor']//button[normalize-space()='Cancel']",
        ))
        .await?
        .click()
        .await?;
        wait_gone(c, "[data-testid=rule-editor]", 5).await?;

        click(c, "[data-testid=tab-provider]").await?;
        wait_text(c, "#key-status", "", 10).await?;
        shoot(c, look, "provider", &mut problems).await?;

        // A new chat, a call waiting on its card, and the card once denied.
        click(c, "[data-testid=tab-chat]").await?;
        press(c, "n", true).await?;
        wait_text(c, "[data-testid=chat-empty]", "", 5).await?;
        shoot(c, look, "chat-empty", &mut problems).await?;
        let words = format!("a greeting in the {look} look");
        provider.push([
            // Two servers offer `echo` by now: the model sees each under its server's prefix.
            Scripted::ok(anthropic::tool_use(
                &format!("toolu_look_{look}"),
                "everything__echo",
                serde_json::json!({ "message": words }),
            )),
            Scripted::ok(anthropic::text("Not run, as you said.")),
        ]);
        let asked = provider.received().len();
        send_and_wait_for_approval(c, "Echo a greeting", &words)
            .await
            .with_context(|| {
                let since: Vec<String> = provider.received()[asked..]
                    .iter()
                    .map(|r| {
                        format!(
                            "{} {}",
                            r.path,
                            r.body
                                .to_string()
                                .chars()
                                .rev()
                                .take(300)
                                .collect::<String>()
                                .chars()
                                .rev()
                                .collect::<String>()
                        )
                    })
                    .collect();
                format!("the provider was asked {} time(s): {since:#?}", since.len())
            })?;
        shoot(c, look, "chat-approval", &mut problems).await?;
        click(c, "[data-testid=approval-card].waiting [data-testid=deny]").await?;
        wait_text(
            c,
            "[data-testid=assistant-message]",
            "Not run, as you said.",
            20,
        )
        .await?;
        shoot(c, look, "chat-denied", &mut problems).await?;
        chat_writing_and_failed(c, provider, look, &mut problems).await?;
    }
    shell::open_settings(c, "general").await?;
    choose_theme(c, "system").await?;
    anyhow::ensure!(
        problems.is_empty(),
        "the look is broken in {} place(s):\n{}",
        problems.len(),
        problems.join("\n")
    );
    Ok(())
}
