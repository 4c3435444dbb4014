//! Wire: the serialized types hosts see, with JSON Schemas and TypeScript declarations.
