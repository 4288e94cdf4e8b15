//! folio's domain types: libraries, documents, chunks, structured text, filters,
//! limits and the error-code catalogue. Every other crate speaks these; none of
//! them knows about storage, models or transports.

pub mod chunk;
pub mod citation;
pub mod document;
pub mod error;
pub mod filter;
pub mod home;
pub mod library;
pub mod limits;
pub mod record;
pub mod script;
pub mod structured;

pub use chunk::{Chunk, ChunkId};
pub use document::{Document, DocumentId, DocumentSummary, SourceKind, content_hash};
pub use error::ErrorCode;
pub use filter::{Condition, Filter, FilterError};
pub use home::folio_home;
pub use library::{EmbeddingSpace, LibraryName, LibraryNameError, Pooling, Precision};
pub use limits::Limits;
pub use record::{FieldKind, FieldSpec, NeighbourOrder, RecordError, RecordSchema, ValidRecord};
pub use structured::{
    Block, BlockKind, Figure, PART_SEPARATOR, Part, StructuredText, Table, alphanumerics,
    is_table_caption,
};
