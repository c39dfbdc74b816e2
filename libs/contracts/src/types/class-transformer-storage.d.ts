// class-transformer types its metadata storage only under types/; the runtime module is cjs/storage.js.
declare module 'class-transformer/cjs/storage.js' {
  export const defaultMetadataStorage: unknown;
}
