//! PostgreSQL only: the schema's migrations.

use super::*;
use hooklab_core::store::StoreError;
use hooklab_postgres::SCHEMA_VERSION;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn replicas_starting_together_migrate_once() {
    let url = fresh_database().await;
    let starts: Vec<_> = (0..4)
        .map(|_| {
            let url = url.clone();
            tokio::spawn(async move { PgStore::connect_with(&url, options()).await })
        })
        .collect();
    for s in starts {
        s.await
            .unwrap()
            .expect("every replica opens: the advisory lock makes the others wait");
    }
    assert_eq!(
        PgStore::migrate(&url).await.unwrap(),
        (SCHEMA_VERSION, SCHEMA_VERSION),
        "a current database is left as it is"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unmigrated_or_newer_database_is_refused() {
    let url = fresh_database().await;
    let no_migrate = PgOptions {
        migrate: false,
        ..options()
    };
    let err = PgStore::connect_with(&url, no_migrate.clone())
        .await
        .unwrap_err();
    assert!(
        err.to_string().contains("hooklab migrate"),
        "an empty database says how to migrate it: {err}"
    );
    assert_eq!(PgStore::migrate(&url).await.unwrap(), (0, SCHEMA_VERSION));
    PgStore::connect_with(&url, no_migrate.clone())
        .await
        .expect("a migrated database opens without migrating");
    let (client, connection) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(connection);
    client
        .batch_execute("UPDATE hooklab_schema SET version = version + 1")
        .await
        .unwrap();
    let err = PgStore::connect(&url).await.unwrap_err();
    assert!(
        matches!(err, StoreError::TooNew { found, .. } if found == SCHEMA_VERSION + 1),
        "a newer schema is refused, never downgraded: {err:?}"
    );
}
