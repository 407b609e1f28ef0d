// picomatch 4 ships no types (DefinitelyTyped's @types/picomatch is not a dependency): the one call
// Ebb makes, as picomatch's README documents it.
declare module "picomatch" {
  interface PicomatchOptions {
    readonly dot?: boolean;
  }
  function picomatch(glob: string | readonly string[], options?: PicomatchOptions): (path: string) => boolean;
  export default picomatch;
}
