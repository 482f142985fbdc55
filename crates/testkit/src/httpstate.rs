//! A small HTTP state server for the `http` backend's tests, speaking the
//! protocol GitLab's managed state uses: `GET`/`POST`/`DELETE /state`,
//! `LOCK`/`UNLOCK /lock` with the lock description as JSON body (423 and
//! the holder's description when held). Real sockets on loopback, one
//! thread per connection, one request per connection.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};

/// What the server holds.
#[derive(Default)]
pub struct Stored {
    /// The state document, if any.
    pub state: Option<Vec<u8>>,
    /// The lock description (JSON) while locked.
    pub lock: Option<String>,
    /// State writes received, with the `ID` query parameter they carried.
    pub writes: Vec<Option<String>>,
    /// `user:password` required as basic auth, when set.
    pub auth: Option<String>,
}

/// A running server; stops accepting when dropped.
pub struct HttpStateServer {
    pub port: u16,
    pub stored: Arc<Mutex<Stored>>,
    stop: Arc<std::sync::atomic::AtomicBool>,
}

impl HttpStateServer {
    /// Starts a server on a free loopback port.
    pub fn start() -> HttpStateServer {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind loopback");
        let port = listener.local_addr().expect("address").port();
        let stored = Arc::new(Mutex::new(Stored::default()));
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let (s, st) = (stored.clone(), stop.clone());
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                if st.load(std::sync::atomic::Ordering::SeqCst) {
                    break;
                }
                if let Ok(c) = conn {
                    let s = s.clone();
                    std::thread::spawn(move || {
                        let _ = serve(c, &s);
                    });
                }
            }
        });
        HttpStateServer { port, stored, stop }
    }

    /// The state address, `http://127.0.0.1:PORT/state`.
    pub fn address(&self) -> String {
        format!("http://127.0.0.1:{}/state", self.port)
    }

    /// The lock address, `http://127.0.0.1:PORT/lock`.
    pub fn lock_address(&self) -> String {
        format!("http://127.0.0.1:{}/lock", self.port)
    }
}

impl Drop for HttpStateServer {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::SeqCst);
        // Wake the accept loop so it sees the flag.
        let _ = TcpStream::connect(("127.0.0.1", self.port));
    }
}

fn respond(c: &mut TcpStream, code: u16, reason: &str, body: &[u8]) -> std::io::Result<()> {
    write!(
        c,
        "HTTP/1.1 {code} {reason}\r\nContent-Length: {}\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n",
        body.len()
    )?;
    c.write_all(body)?;
    c.flush()
}

fn serve(c: TcpStream, stored: &Mutex<Stored>) -> std::io::Result<()> {
    let mut reader = BufReader::new(c.try_clone()?);
    let mut line = String::new();
    reader.read_line(&mut line)?;
    let mut parts = line.split_whitespace();
    let method = parts.next().unwrap_or("").to_string();
    let target = parts.next().unwrap_or("").to_string();
    let mut length = 0usize;
    let mut auth = None;
    loop {
        let mut h = String::new();
        if reader.read_line(&mut h)? == 0 || h == "\r\n" || h == "\n" {
            break;
        }
        if let Some((k, v)) = h.split_once(':') {
            let (k, v) = (k.trim().to_ascii_lowercase(), v.trim().to_string());
            if k == "content-length" {
                length = v.parse().unwrap_or(0);
            } else if k == "authorization" {
                auth = Some(v);
            }
        }
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body)?;
    let mut c = c;
    let (path, query) = target.split_once('?').unwrap_or((&target, ""));
    let mut s = stored.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(want) = &s.auth {
        use std::fmt::Write as _;
        let mut encoded = String::new();
        // Basic auth: base64 of user:password (encoded here by hand: the
        // testkit has no base64 dependency).
        let table = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        for chunk in want.as_bytes().chunks(3) {
            let b = [
                chunk[0],
                *chunk.get(1).unwrap_or(&0),
                *chunk.get(2).unwrap_or(&0),
            ];
            let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
            for i in 0..4 {
                if i <= chunk.len() {
                    let _ = encoded.write_char(table[((n >> (18 - 6 * i)) & 63) as usize] as char);
                } else {
                    encoded.push('=');
                }
            }
        }
        if auth.as_deref() != Some(&format!("Basic {encoded}")) {
            return respond(&mut c, 401, "Unauthorized", b"");
        }
    }
    match (method.as_str(), path) {
        ("GET", "/state") => match &s.state {
            Some(d) => {
                let d = d.clone();
                respond(&mut c, 200, "OK", &d)
            }
            None => respond(&mut c, 404, "Not Found", b""),
        },
        ("POST", "/state") => {
            let id = query
                .split('&')
                .find_map(|kv| kv.strip_prefix("ID="))
                .map(str::to_string);
            s.writes.push(id);
            s.state = Some(body);
            respond(&mut c, 200, "OK", b"")
        }
        ("DELETE", "/state") => {
            s.state = None;
            respond(&mut c, 200, "OK", b"")
        }
        ("LOCK", "/lock") => match &s.lock {
            Some(held) => {
                let held = held.clone();
                respond(&mut c, 423, "Locked", held.as_bytes())
            }
            None => {
                s.lock = Some(String::from_utf8_lossy(&body).into_owned());
                respond(&mut c, 200, "OK", b"")
            }
        },
        ("UNLOCK", "/lock") => {
            s.lock = None;
            respond(&mut c, 200, "OK", b"")
        }
        _ => respond(&mut c, 405, "Method Not Allowed", b""),
    }
}
