//! TCP for HTTP systems under test, asking the kernel to acknowledge at once while an answer is
//! awaited.
//!
//! A server that writes its response headers and its body in two writes without TCP_NODELAY
//! (Python's `http.server`, many hand-written ones) has its body held back by Nagle's algorithm
//! until fcorr acknowledges the headers, and on a kept-alive connection Linux delays that
//! acknowledgement by up to 40 ms: a stall of ~40 ms per call (benches/http). TCP_NODELAY on
//! fcorr's own socket (ureq's default, kept) cannot help: the held data is the server's.
//! TCP_QUICKACK after each request can; the kernel falls back to delayed acknowledgements by
//! itself once fcorr sends again, so it is asked on every request. Elsewhere than Linux this is
//! plain TCP.
//!
//! ureq keeps its TCP transport private, so the transport is written here, on ureq's transport
//! API (`ureq::unversioned`): connect to the first address that accepts, write and read with the
//! call's timeouts, as ureq's own does.

use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::sync::Arc;

use ureq::unversioned::transport::{
    Buffers, ConnectionDetails, Connector, Either, LazyBuffers, NextTimeout, Transport,
};
use ureq::{Error, Timeout};

/// Opens TCP connections as [`QuickAck`] transports; a connection a proxy connector earlier in
/// the chain already opened is passed on untouched.
#[derive(Debug, Default)]
pub(crate) struct QuickAckTcp;

impl<In: Transport> Connector<In> for QuickAckTcp {
    type Out = Either<In, QuickAck>;

    fn connect(&self, details: &ConnectionDetails, chained: Option<In>) -> Result<Option<Self::Out>, Error> {
        if let Some(chained) = chained {
            return Ok(Some(Either::A(chained)));
        }
        let stream = connect(details)?;
        if details.config.no_delay() {
            stream.set_nodelay(true)?;
        }
        let stream = Arc::new(stream);
        // ureq cuts a call short by shutting the socket down through this weak handle.
        (details.register_shutdown)(Arc::downgrade(&stream) as _)?;
        let buffers = LazyBuffers::new(details.config.input_buffer_size(), details.config.output_buffer_size());
        Ok(Some(Either::B(QuickAck { stream, buffers })))
    }
}

/// The first resolved address that accepts a connection within the call's timeout. As in ureq:
/// a refused or unreachable address moves on to the next, a timeout is `Timeout::Connect`, and
/// the last address's error is the one reported.
fn connect(details: &ConnectionDetails) -> Result<TcpStream, Error> {
    let timeout = details.timeout.not_zero().map(|t| *t);
    let mut last = None;
    for addr in details.addrs.iter() {
        let attempt = match timeout {
            Some(timeout) => TcpStream::connect_timeout(addr, timeout),
            None => TcpStream::connect(addr),
        };
        match attempt {
            Ok(stream) => return Ok(stream),
            Err(e) if matches!(e.kind(), ErrorKind::TimedOut | ErrorKind::WouldBlock) => {
                return Err(Error::Timeout(Timeout::Connect));
            }
            Err(e) => last = Some(e),
        }
    }
    Err(Error::Io(
        last.unwrap_or_else(|| std::io::Error::new(ErrorKind::ConnectionRefused, "no address to connect to")),
    ))
}

/// A TCP connection that asks for immediate acknowledgements after each write.
#[derive(Debug)]
pub(crate) struct QuickAck {
    stream: Arc<TcpStream>,
    buffers: LazyBuffers,
}

impl QuickAck {
    fn quick_ack(&self) {
        #[cfg(target_os = "linux")]
        {
            use std::os::fd::AsRawFd;
            let on: libc::c_int = 1;
            // SAFETY: setsockopt reads the int `on` (its size given) for a socket this struct
            // owns; a failure only leaves acknowledgements delayed, so it is ignored.
            unsafe {
                libc::setsockopt(
                    self.stream.as_raw_fd(),
                    libc::IPPROTO_TCP,
                    libc::TCP_QUICKACK,
                    (&on as *const libc::c_int).cast(),
                    std::mem::size_of::<libc::c_int>() as libc::socklen_t,
                );
            }
        }
    }
}

/// The time left for one read or write, or the timeout error when none is left.
fn budget(timeout: NextTimeout) -> Result<(Option<std::time::Duration>, Timeout), Error> {
    if timeout.after.is_zero() {
        return Err(Error::Timeout(timeout.reason));
    }
    Ok((timeout.not_zero().map(|t| *t), timeout.reason))
}

/// A socket timeout (or a would-block, which is what a socket timeout looks like on some
/// systems) becomes ureq's timeout error with the reason the budget came from.
fn io_error(e: std::io::Error, reason: Timeout) -> Error {
    match e.kind() {
        ErrorKind::TimedOut | ErrorKind::WouldBlock => Error::Timeout(reason),
        _ => Error::Io(e),
    }
}

impl Transport for QuickAck {
    fn buffers(&mut self) -> &mut dyn Buffers {
        &mut self.buffers
    }

    fn transmit_output(&mut self, amount: usize, timeout: NextTimeout) -> Result<(), Error> {
        let (limit, reason) = budget(timeout.for_write())?;
        self.stream.set_write_timeout(limit)?;
        let output = &self.buffers.output()[..amount];
        (&*self.stream).write_all(output).map_err(|e| io_error(e, reason))?;
        self.quick_ack();
        Ok(())
    }

    fn await_input(&mut self, timeout: NextTimeout) -> Result<bool, Error> {
        let (limit, reason) = budget(timeout.for_read())?;
        self.stream.set_read_timeout(limit)?;
        let started = std::time::Instant::now();
        let amount = loop {
            match (&*self.stream).read(self.buffers.input_append_buf()) {
                // A signal interrupted the read: Linux does not restart socket reads that have a
                // timeout, so retry with what is left of it.
                Err(e) if e.kind() == ErrorKind::Interrupted => {
                    if let Some(limit) = limit {
                        let left = limit.saturating_sub(started.elapsed());
                        if left.is_zero() {
                            return Err(Error::Timeout(reason));
                        }
                        self.stream.set_read_timeout(Some(left))?;
                    }
                }
                result => break result.map_err(|e| io_error(e, reason))?,
            }
        };
        self.buffers.input_appended(amount);
        self.quick_ack();
        Ok(amount > 0)
    }

    fn is_open(&mut self) -> bool {
        // A pooled connection is usable when nothing is waiting to be read on it (a server
        // sending unasked bytes, or the end of the stream, means it is not).
        if self.stream.set_nonblocking(true).is_err() {
            return false;
        }
        let mut byte = [0u8];
        let idle = matches!((&*self.stream).read(&mut byte), Err(e) if e.kind() == ErrorKind::WouldBlock);
        self.stream.set_nonblocking(false).is_ok() && idle
    }
}

#[cfg(test)]
mod tests {
    use std::io::{BufRead, BufReader, Read, Write};
    use std::net::TcpListener;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    use super::super::http::Client;

    /// A keep-alive server that answers every POST with `{"output": "<n>"}`, writing the headers
    /// and the body in two writes (as Python's http.server does); counts the connections.
    fn two_write_server() -> (String, Arc<AtomicUsize>) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/", listener.local_addr().unwrap());
        let connections = Arc::new(AtomicUsize::new(0));
        let counted = connections.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { return };
                let n = counted.fetch_add(1, Ordering::SeqCst);
                std::thread::spawn(move || {
                    let mut reader = BufReader::new(stream.try_clone().unwrap());
                    let mut writer = stream;
                    for answer in 0.. {
                        let mut length = 0;
                        loop {
                            let mut line = String::new();
                            if reader.read_line(&mut line).unwrap_or(0) == 0 {
                                return;
                            }
                            if let Some(value) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                                length = value.trim().parse().unwrap();
                            }
                            if line == "\r\n" {
                                break;
                            }
                        }
                        let mut body = vec![0; length];
                        reader.read_exact(&mut body).unwrap();
                        let reply = format!("{{\"output\": \"{n}-{answer}\"}}");
                        let head = format!("HTTP/1.1 200 OK\r\ncontent-length: {}\r\n\r\n", reply.len());
                        writer.write_all(head.as_bytes()).unwrap();
                        writer.write_all(reply.as_bytes()).unwrap();
                    }
                });
            }
        });
        (url, connections)
    }

    #[test]
    fn answers_arrive_whole_over_one_kept_alive_connection() {
        let (url, connections) = two_write_server();
        let client = Client::new(Duration::from_secs(10));
        for answer in 0..5 {
            let body = client.post_json(&url, &url, &[], &serde_json::json!({"prompt": "x"})).unwrap();
            assert_eq!(body, format!("{{\"output\": \"0-{answer}\"}}"));
        }
        // The pooled connection was found open and reused every time.
        assert_eq!(connections.load(Ordering::SeqCst), 1);
    }
}
