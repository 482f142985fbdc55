//! The body of an HTTP/2 message read straight from its h2 stream, for
//! both ends of a plugin connection: the client reads responses with it
//! (see `client::Conn`), the server requests (see `server`).

use std::pin::Pin;
use std::task::{Context, Poll};

/// A message body read from its h2 stream: the data frames (each one's
/// window given back as it is read, so the peer may send more), then the
/// trailers (which carry a response's gRPC status).
pub struct RecvBody {
    recv: h2::RecvStream,
    data_done: bool,
}

impl RecvBody {
    pub(crate) fn new(recv: h2::RecvStream) -> RecvBody {
        RecvBody {
            recv,
            data_done: false,
        }
    }
}

impl http_body::Body for RecvBody {
    type Data = bytes::Bytes;
    type Error = h2::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<bytes::Bytes>, h2::Error>>> {
        let this = &mut *self;
        if !this.data_done {
            match std::task::ready!(this.recv.poll_data(cx)) {
                Some(Ok(data)) => {
                    let _ = this.recv.flow_control().release_capacity(data.len());
                    return Poll::Ready(Some(Ok(http_body::Frame::data(data))));
                }
                // A reset without an error ends the body, as hyper reads it.
                Some(Err(e))
                    if matches!(e.reason(), Some(h2::Reason::NO_ERROR | h2::Reason::CANCEL)) =>
                {
                    return Poll::Ready(None)
                }
                Some(Err(e)) => return Poll::Ready(Some(Err(e))),
                None => this.data_done = true,
            }
        }
        match std::task::ready!(this.recv.poll_trailers(cx)) {
            Ok(Some(trailers)) => Poll::Ready(Some(Ok(http_body::Frame::trailers(trailers)))),
            Ok(None) => Poll::Ready(None),
            Err(e) => Poll::Ready(Some(Err(e))),
        }
    }

    fn is_end_stream(&self) -> bool {
        self.recv.is_end_stream()
    }
}
