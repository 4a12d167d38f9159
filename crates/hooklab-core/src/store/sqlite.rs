//! PLACEHOLDER: the SQLite store.
