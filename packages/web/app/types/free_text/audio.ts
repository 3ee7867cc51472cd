/**
 * Whether a free-text item is audio (a transcription): by the URL's extension, or a presigned URL that names an audio content type (`response-content-type=audio/...`, as S3 and GCS sign it).
 * The claim carries no content type of its own.
 */
const AUDIO_EXTENSIONS = /\.(aac|flac|m4a|mp3|mpga|oga|ogg|opus|wav|weba)$/i;

/** Whether `url` names an audio item (module doc). */
export function isAudioUrl(url: string): boolean {
  try {
    const u = new URL(url);
    if (AUDIO_EXTENSIONS.test(u.pathname)) return true;
    for (const [key, value] of u.searchParams) if (/content-type$/i.test(key) && /^audio\//i.test(value)) return true;
    return false;
  } catch {
    return false;
  }
}
