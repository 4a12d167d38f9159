//! hooklab-server
