/** Where a build's sources are (`root`) and where builds are kept (`cacheDir`). */
export interface BuildPlace {
  readonly root: string;
  readonly cacheDir: string;
}

/** This repository, its builds under node_modules/.cache/ebb-cli/. */
export const DEFAULT_PLACE: BuildPlace;

/** The file URL of the CLI built from the sources as they are now; undefined without esbuild. */
export function builtCli(place?: BuildPlace): Promise<string | undefined>;
