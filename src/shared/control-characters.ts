/**
 * Text without control characters: none of General_Category Cc, which is exactly U+0000–U+001F and
 * U+007F–U+009F. Written as ranges rather than `^\P{Cc}*$` because the pattern goes into the OpenAPI
 * document, and a validator that compiles it without Unicode support (Spectral's, many generators') reads
 * `\P{Cc}` as the letters `P{Cc}`. control-characters.test.ts proves, over every code point, that it
 * matches exactly what `^\P{Cc}*$` matches, with or without the `u` flag.
 */
// eslint-disable-next-line no-control-regex -- naming the control characters is the point of this pattern
export const NO_CONTROL_CHARACTERS = /^[^\u0000-\u001F\u007F-\u009F]*$/u;
