/** Whether `text` has a C0 control character (NUL, newline, escape, …) or DEL: never valid in a name or path. */
export function hasControlCharacter(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x20 || code === 0x7f) return true;
  }
  return false;
}
