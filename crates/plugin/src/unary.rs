//! A unary gRPC call on a [`Conn`] without tonic's client: the engine's
//! calls to a plugin (thousands per plan) are all unary, and tonic's
//! generic path (request and response wrappers, a streaming decoder with
//! its buffers, compression negotiation, a body adapter) cost about as
//! much per call as the rest of the client. What a call sends and how it
//! reads the answer follow tonic's client, so a plugin sees the same
//! requests (`POST`, `content-type: application/grpc`, `te: trailers`)
//! and a failure comes back as the same [`tonic::Status`]:
//!
//! * a connection that fails: `Status::from_error` of the h2 error, as
//!   tonic makes it (the engine tells a crash from it);
//! * a `grpc-status` in the head (a trailers-only answer) or in the
//!   trailers: that status when it is not OK;
//! * no `grpc-status` and an HTTP status other than 200: the code the gRPC
//!   HTTP mapping gives that status;
//! * no message: `Internal`, "Missing response message.".
//!
//! The message is framed as gRPC frames it (a flag byte for compression,
//! never set here, and a 4-byte big-endian length); an answer compressed
//! or larger than [`MAX_MESSAGE_SIZE`] is refused.

use crate::{Conn, MAX_MESSAGE_SIZE};
use bytes::{Buf, Bytes, BytesMut};
use tonic::{Code, Status};

/// The gRPC frame header's length: flag byte and message length.
const HEADER: usize = 5;

/// A request body for [`Conn::unary`]: `encode` writes the message of
/// `len` bytes after the frame header.
pub fn frame(len: usize, encode: impl FnOnce(&mut Vec<u8>)) -> Result<Vec<u8>, Status> {
    if len > MAX_MESSAGE_SIZE {
        return Err(Status::out_of_range(format!(
            "the request message is {len} bytes, more than the {MAX_MESSAGE_SIZE} a plugin accepts"
        )));
    }
    let mut buf = Vec::with_capacity(HEADER + len);
    buf.push(0);
    buf.extend_from_slice(&(len as u32).to_be_bytes());
    encode(&mut buf);
    Ok(buf)
}

impl Conn {
    /// Calls `path` (`/package.Service/Method`) with `body` (see
    /// [`frame`]) and answers the response message's bytes.
    pub async fn unary(&self, path: &'static str, body: Vec<u8>) -> Result<Bytes, Status> {
        let uri = http::Uri::builder()
            .scheme("http")
            .authority("localhost")
            .path_and_query(path)
            .build()
            .map_err(|e| Status::internal(format!("invalid call path {path}: {e}")))?;
        let mut head = http::Request::post(uri)
            .body(())
            .map_err(|e| Status::internal(e.to_string()))?;
        let headers = head.headers_mut();
        headers.insert(
            http::header::CONTENT_TYPE,
            http::HeaderValue::from_static("application/grpc"),
        );
        headers.insert(http::header::TE, http::HeaderValue::from_static("trailers"));
        let response = self
            .send(head, Bytes::from(body))
            .await
            .map_err(Status::from_error)?;
        let (parts, mut recv) = response.into_parts();
        if let Err(Some(status)) = status_of(Some(&parts.headers), parts.status) {
            return Err(status);
        }
        let mut data = BytesMut::new();
        loop {
            match recv.data().await {
                Some(Ok(chunk)) => {
                    let _ = recv.flow_control().release_capacity(chunk.len());
                    if data.len() + chunk.len() > HEADER + MAX_MESSAGE_SIZE {
                        return Err(too_large(data.len() + chunk.len() - HEADER));
                    }
                    data.extend_from_slice(&chunk);
                }
                // A reset without an error ends the body, as tonic reads it.
                Some(Err(e))
                    if matches!(e.reason(), Some(h2::Reason::NO_ERROR | h2::Reason::CANCEL)) =>
                {
                    break
                }
                Some(Err(e)) => return Err(Status::from_error(Box::new(e))),
                None => break,
            }
        }
        let trailers = if recv.is_end_stream() {
            None
        } else {
            recv.trailers()
                .await
                .map_err(|e| Status::from_error(Box::new(e)))?
        };
        if let Some(trailers) = &trailers {
            if let Err(Some(status)) = status_of(Some(trailers), parts.status) {
                return Err(status);
            }
        }
        message(data.freeze())
    }
}

/// The one message of a unary answer's body.
fn message(mut data: Bytes) -> Result<Bytes, Status> {
    if data.is_empty() {
        return Err(Status::internal("Missing response message."));
    }
    if data.len() < HEADER {
        return Err(Status::internal(format!(
            "the response ends inside a message header ({} bytes)",
            data.len()
        )));
    }
    let flag = data.get_u8();
    let len = data.get_u32() as usize;
    match flag {
        0 => {}
        1 => {
            return Err(Status::internal(
                "the response message is compressed, but no compression was agreed",
            ))
        }
        f => {
            return Err(Status::internal(format!(
                "the response message has the invalid compression flag {f}"
            )))
        }
    }
    if len > MAX_MESSAGE_SIZE {
        return Err(too_large(len));
    }
    if data.len() < len {
        return Err(Status::internal(format!(
            "the response ends inside its message ({} of {len} bytes)",
            data.len()
        )));
    }
    Ok(data.split_to(len))
}

fn too_large(len: usize) -> Status {
    Status::out_of_range(format!(
        "the response message is {len} bytes, more than the {MAX_MESSAGE_SIZE} the client accepts"
    ))
}

/// The call's outcome from a header map (the head or the trailers) and
/// the HTTP status: `Ok` when it carries `grpc-status: 0`; `Err(Some)`
/// for any other status it carries, or, without one, for an HTTP status
/// other than 200 (mapped as gRPC's HTTP mapping says); `Err(None)` for
/// no status at all on a 200 (the answer goes on).
fn status_of(
    headers: Option<&http::HeaderMap>,
    http_status: http::StatusCode,
) -> Result<(), Option<Status>> {
    // The usual answer: OK, with nothing else to read.
    if headers
        .and_then(|h| h.get("grpc-status"))
        .is_some_and(|v| v.as_bytes() == b"0")
    {
        return Ok(());
    }
    if let Some(status) = headers.and_then(Status::from_header_map) {
        return if status.code() == Code::Ok {
            Ok(())
        } else {
            Err(Some(status))
        };
    }
    let code = match http_status.as_u16() {
        200 => return Err(None),
        400 => Code::Internal,
        401 => Code::Unauthenticated,
        403 => Code::PermissionDenied,
        404 => Code::Unimplemented,
        429 | 502 | 503 | 504 => Code::Unavailable,
        _ => Code::Unknown,
    };
    Err(Some(Status::new(
        code,
        format!(
            "grpc-status header missing, mapped from HTTP status code {}",
            http_status.as_u16()
        ),
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames() {
        let body = frame(3, |b| b.extend_from_slice(b"abc")).unwrap();
        assert_eq!(body, b"\0\0\0\0\x03abc");
        assert_eq!(
            frame(MAX_MESSAGE_SIZE + 1, |_| unreachable!())
                .unwrap_err()
                .code(),
            Code::OutOfRange
        );
    }

    /// `s` has `code` and a message containing `words`.
    fn is_status(case: &str, s: &Status, (code, words): (Code, &str)) {
        assert_eq!(s.code(), code, "{case}: {s:?}");
        assert!(s.message().contains(words), "{case}: {s:?}");
    }

    #[test]
    fn messages() {
        fn check(case: &str, body: &[u8], want: Result<&[u8], (Code, &str)>) {
            let got = message(Bytes::copy_from_slice(body));
            match (got, want) {
                (Ok(m), Ok(w)) => assert_eq!(&m[..], w, "{case}"),
                (Err(s), Err(want)) => is_status(case, &s, want),
                (got, want) => panic!("{case}: got {got:?}, want {want:?}"),
            }
        }
        check("one message", b"\0\0\0\0\x02hi", Ok(b"hi"));
        check("an empty message", b"\0\0\0\0\0", Ok(b""));
        check(
            "no message",
            b"",
            Err((Code::Internal, "Missing response message.")),
        );
        check(
            "a header cut short",
            b"\0\0\0",
            Err((Code::Internal, "inside a message header")),
        );
        check(
            "a message cut short",
            b"\0\0\0\0\x05hi",
            Err((Code::Internal, "inside its message (2 of 5 bytes)")),
        );
        check(
            "compressed",
            b"\x01\0\0\0\x02hi",
            Err((Code::Internal, "compressed")),
        );
        check(
            "an unknown flag",
            b"\x07\0\0\0\x02hi",
            Err((Code::Internal, "invalid compression flag 7")),
        );
        check(
            "longer than the limit",
            &[0, 0xff, 0xff, 0xff, 0xff],
            Err((Code::OutOfRange, "more than the")),
        );
    }

    #[test]
    fn statuses() {
        fn check(
            case: &str,
            headers: &[(&'static str, &'static str)],
            http: u16,
            want: Result<(), Option<(Code, &str)>>,
        ) {
            let mut map = http::HeaderMap::new();
            for (k, v) in headers {
                map.insert(*k, http::HeaderValue::from_static(v));
            }
            let got = status_of(Some(&map), http::StatusCode::from_u16(http).unwrap());
            match (got, want) {
                (Ok(()), Ok(())) | (Err(None), Err(None)) => {}
                (Err(Some(s)), Err(Some(want))) => is_status(case, &s, want),
                (got, want) => panic!("{case}: got {got:?}, want {want:?}"),
            }
        }
        check("OK", &[("grpc-status", "0")], 200, Ok(()));
        check(
            "OK with a message",
            &[("grpc-status", "0"), ("grpc-message", "fine")],
            200,
            Ok(()),
        );
        check(
            "a status that only starts like OK",
            &[("grpc-status", "05")],
            200,
            Err(Some((Code::Unknown, ""))),
        );
        check(
            "a status with its message",
            &[("grpc-status", "3"), ("grpc-message", "bad%20input")],
            200,
            Err(Some((Code::InvalidArgument, "bad input"))),
        );
        check("no status on 200", &[], 200, Err(None));
        check(
            "no status on 404",
            &[],
            404,
            Err(Some((Code::Unimplemented, "HTTP status code 404"))),
        );
        check(
            "no status on 503",
            &[],
            503,
            Err(Some((Code::Unavailable, "HTTP status code 503"))),
        );
        check(
            "no status on 500",
            &[],
            500,
            Err(Some((Code::Unknown, "HTTP status code 500"))),
        );
        check(
            "a status wins over the HTTP status",
            &[("grpc-status", "0")],
            500,
            Ok(()),
        );
    }
}
