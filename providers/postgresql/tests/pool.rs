//! The provider's connection pool against the real server: statements
//! beyond `max_connections` wait for a free connection, connections are
//! reused, a database that does not exist is reported as such (reads turn
//! that into "vanished"), and a refused connection names the port.

mod support;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;
use terrane_provider_postgresql::pool::{ConnectError, Pool, Settings};

fn settings(srv: &support::Server, max: usize) -> Settings {
    Settings {
        host: srv.host.clone(),
        port: srv.port,
        username: srv.user.clone(),
        password: Some(srv.password.clone()),
        database: srv.database.clone(),
        sslmode: "disable".into(),
        sslrootcert: None,
        connect_timeout: Duration::from_secs(5),
        max_connections: max,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn statements_are_bounded_by_max_connections() {
    let Some(url) = terrane_testkit::pg_url() else {
        return;
    };
    let srv = support::parse_url(&url);
    let pool = Pool::new(settings(&srv, 2));
    // Every holder waits at a two-party barrier while it holds its
    // connection: with at most two connections the holders pass in pairs,
    // so the peak is exactly two without any timed statement; a pool that
    // handed out fewer would never complete a pair (the deadline below).
    let pair = Arc::new(tokio::sync::Barrier::new(2));
    let (now, peak) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let mut tasks = Vec::new();
    for _ in 0..6 {
        let (pool, now, peak, pair) = (pool.clone(), now.clone(), peak.clone(), pair.clone());
        tasks.push(tokio::spawn(async move {
            let conn = pool.get(None).await.expect("connection");
            let n = now.fetch_add(1, Ordering::SeqCst) + 1;
            peak.fetch_max(n, Ordering::SeqCst);
            let pid: i32 = conn
                .query_one("SELECT pg_backend_pid()", &[])
                .await
                .expect("pid")
                .get(0);
            pair.wait().await;
            now.fetch_sub(1, Ordering::SeqCst);
            pid
        }));
    }
    let mut pids = std::collections::BTreeSet::new();
    let all = async {
        for t in tasks {
            pids.insert(t.await.unwrap());
        }
    };
    tokio::time::timeout(Duration::from_secs(60), all)
        .await
        .expect("case two_connections_at_once: the holders never paired up");
    assert_eq!(
        peak.load(Ordering::SeqCst),
        2,
        "case at_most_max_connections_statements_at_once"
    );
    assert!(
        pids.len() <= 2,
        "case connections_reused: {} backends",
        pids.len()
    );

    match pool.get(Some("no_such_database_here")).await {
        Err(ConnectError::NoDatabase) => {}
        Err(ConnectError::Other(d)) => panic!("case missing_database_is_vanished: {d}"),
        Ok(_) => panic!("case missing_database_is_vanished: connected"),
    }

    let dead = terrane_testkit::refused_port();
    let mut s = settings(&srv, 1);
    s.port = dead.port;
    match Pool::new(s).get(None).await {
        Err(ConnectError::Other(d)) => assert_eq!(
            d.0[0].path.as_ref().map(ToString::to_string).as_deref(),
            Some(".port"),
            "case refused_names_port: {d}"
        ),
        _ => panic!("case refused_names_port: expected a connection error"),
    }
}
