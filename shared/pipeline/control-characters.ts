/** Whether `text` has a C0 control character (NUL, newline, escape, …) or DEL: never valid in a name or path. */
export function hasControlCharacter(text: string): boolean {
  return controlCharacterIndex(text) >= 0;
}

/** Where the first control character of `text` is, or -1. */
export function controlCharacterIndex(text: string): number {
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x20 || code === 0x7f) return i;
  }
  return -1;
}
