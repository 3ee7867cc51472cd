/**
 * Markdown a customer wrote (a label space's instructions, an example's explanation) as safe HTML: `marked`
 * (GitHub-flavoured Markdown) renders it with raw HTML escaped (shown as text, as markdown-it does with `html`
 * off: no tag of the author's reaches the page, nor the parser of the sanitizer), then DOMPurify keeps only inert
 * markup of what Markdown itself made, a second line of defence. No script, no event handler,
 * no style, no form or embedded content; links only to http(s), mailto or an anchor, opened in a new tab without
 * a referrer. Images are not loaded from elsewhere: a Markdown or HTML image becomes a link to it (the labeler
 * opens it on purpose), so instructions cannot track who reads them.
 */
import DOMPurify from "dompurify";
import { Marked } from "marked";

/** `text` with the characters that mean markup in HTML escaped. */
function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

const markdown = new Marked({
  gfm: true,
  async: false,
  renderer: {
    // raw HTML in the Markdown is text, never markup
    html({ text }) {
      return escapeHtml(text);
    },
    // an image is shown as a link to it: nothing is fetched from elsewhere while the instructions render
    image({ href, text }) {
      const label = text || href;
      return `<a href="${escapeHtml(encodeURI(href))}">image: ${escapeHtml(label)}</a>`;
    },
  },
});

const purifier = typeof window === "undefined" ? undefined : DOMPurify(window);

purifier?.addHook("afterSanitizeAttributes", (node) => {
  if (node.tagName === "A") {
    node.setAttribute("target", "_blank");
    node.setAttribute("rel", "noopener noreferrer nofollow");
  }
});

/** The sanitized HTML of `source` (Markdown; raw HTML in it is sanitized too). */
export function markdownToSafeHtml(source: string): string {
  const html = markdown.parse(source) as string;
  if (!purifier) return "";
  return purifier.sanitize(html, {
    FORBID_TAGS: [
      "img",
      "picture",
      "source",
      "video",
      "audio",
      "iframe",
      "object",
      "embed",
      "svg",
      "math",
      "style",
      "form",
      "input",
      "button",
      "textarea",
      "select",
    ],
    FORBID_ATTR: ["style", "srcset", "src"],
    ALLOWED_URI_REGEXP: /^(?:https?:|mailto:|#)/i,
  });
}
