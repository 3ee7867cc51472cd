/**
 * Splits a byte stream into lines (LF or CRLF), UTF-8 safe across chunk boundaries, holding at most one
 * partial line in memory. Iterating respects the source stream's backpressure (`for await` on the stream).
 * @throws LineTooLongError when a line exceeds `maxLineBytes` (default 1 MiB).
 */
import { StringDecoder } from "node:string_decoder";

export class LineTooLongError extends Error {
  override name = "LineTooLongError";
  constructor(
    readonly lineNumber: number,
    maxLineBytes: number,
  ) {
    super(`line ${lineNumber}: longer than ${maxLineBytes} bytes`);
  }
}

export async function* readLines(
  source: AsyncIterable<Buffer | string>,
  maxLineBytes = 1024 * 1024,
): AsyncGenerator<{ line: string; number: number }> {
  const decoder = new StringDecoder("utf8");
  let partial = "";
  let number = 0;
  for await (const chunk of source) {
    const text = partial + (typeof chunk === "string" ? chunk : decoder.write(chunk));
    let start = 0;
    for (let nl = text.indexOf("\n", start); nl !== -1; nl = text.indexOf("\n", start)) {
      number++;
      const end = nl > start && text.charCodeAt(nl - 1) === 13 ? nl - 1 : nl;
      yield { line: text.slice(start, end), number };
      start = nl + 1;
    }
    partial = text.slice(start);
    if (Buffer.byteLength(partial) > maxLineBytes) throw new LineTooLongError(number + 1, maxLineBytes);
  }
  partial += decoder.end();
  if (partial.length > 0) {
    number++;
    yield { line: partial.endsWith("\r") ? partial.slice(0, -1) : partial, number };
  }
}
