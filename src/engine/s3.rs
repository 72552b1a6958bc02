//! The S3 engine: one worker's requests to an object store, each signed
//! (AWS Signature Version 4 by rusty-s3, in the query string) and sent on
//! a keep-alive connection (ureq's pool; TLS by rustls), and timed to
//! its first byte and its last.

use rusty_s3::actions::{
    CompleteMultipartUpload, CreateMultipartUpload, DeleteObject, GetObject, HeadBucket,
    HeadObject, ListObjectsV2, PutObject, UploadPart,
};
use rusty_s3::{Bucket, Credentials, S3Action, UrlStyle};
use std::io::Read;
use std::time::{Duration, Instant};

/// How long a signature stays good: longer than any run's request waits.
const SIGNED_FOR: Duration = Duration::from_secs(3600);

/// A signed URL of a GET or HEAD is used again for so long (well inside
/// SIGNED_FOR), as any client of presigned URLs does: signing is a dozen
/// SHA-256 blocks and a few allocations, a tenth of a small GET's cost
/// on the client.
const REUSED_FOR: Duration = Duration::from_secs(1800);

/// Signed URLs of GETs and HEADs, by key; bounded.
#[derive(Default)]
struct Signed {
    urls: std::collections::HashMap<(bool, String), (String, Instant)>,
}

impl Signed {
    const MOST: usize = 100_000;

    fn get_or(&mut self, head: bool, key: &str, sign: impl FnOnce() -> String) -> String {
        if let Some((url, at)) = self.urls.get(&(head, key.to_string()))
            && at.elapsed() < REUSED_FOR
        {
            return url.clone();
        }
        if self.urls.len() >= Self::MOST {
            self.urls.clear();
        }
        let url = sign();
        self.urls
            .insert((head, key.to_string()), (url.clone(), Instant::now()));
        url
    }
}

/// A request that got no answer within this is an error of its own.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(120);

/// Where a store is and who signs for it.
#[derive(Clone)]
pub struct StoreAddress {
    pub endpoint: String,
    pub bucket: String,
    pub region: String,
    pub virtual_host: bool,
    pub credentials: Credentials,
}

pub use super::request::{Failure, Outcome, Timing};
use super::request::{ObjectMethod, ObjectTransport, status_failure};

/// One worker's connection to a store.
pub struct S3Client {
    agent: ureq::Agent,
    bucket: Bucket,
    credentials: Credentials,
    pub endpoint: String,
    sink: Vec<u8>,
    signed: Signed,
    /// How GET, PUT, HEAD and DELETE go: a plain connection to an
    /// http:// endpoint (see http1.rs), else ureq's.
    objects: Box<dyn ObjectTransport>,
    /// Object requests end by then (the run's end), and at a stop.
    until: Option<Instant>,
    stop: Option<crate::util::stop::StopFlag>,
}

impl S3Client {
    pub fn new(address: &StoreAddress, connections: usize) -> Result<S3Client, String> {
        let url: url::Url = address
            .endpoint
            .parse()
            .map_err(|e| format!("--s3-endpoint {}: {e}", address.endpoint))?;
        let style = if address.virtual_host {
            UrlStyle::VirtualHost
        } else {
            UrlStyle::Path
        };
        let bucket = Bucket::new(url, style, address.bucket.clone(), address.region.clone())
            .map_err(|e| format!("--s3-endpoint {}: {e}", address.endpoint))?;
        // The host requests go to, and are signed for: BUCKET.HOST under
        // virtual-hosted addressing.
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .max_idle_connections_per_host(connections.max(1))
            .max_idle_connections(connections.max(1))
            // Each phase but the name's lookup: ureq looks the name up on
            // every request, pooled connection or not, and a lookup with a
            // time limit is a thread of its own (a thread a request).
            // The phases without a body (to the answer's head) wait as
            // long as a plain connection waits for a byte.
            .timeout_connect(Some(super::http1::SILENT_AT_MOST))
            .timeout_send_request(Some(super::http1::SILENT_AT_MOST))
            .timeout_send_body(Some(REQUEST_TIMEOUT))
            .timeout_recv_response(Some(super::http1::SILENT_AT_MOST))
            .timeout_recv_body(Some(REQUEST_TIMEOUT))
            .max_redirects(0)
            .build()
            .into();
        let objects: Box<dyn ObjectTransport> = match bucket.object_url("") {
            Ok(base) if base.scheme() == "http" => {
                Box::new(super::http1::Http1Connection::new(&base, REQUEST_TIMEOUT)?)
            }
            _ => Box::new(UreqObjects {
                agent: agent.clone(),
                until: None,
                stop: None,
            }),
        };
        Ok(S3Client {
            agent,
            bucket,
            credentials: address.credentials.clone(),
            endpoint: address.endpoint.clone(),
            sink: vec![0; 256 << 10],
            signed: Signed::default(),
            objects,
            until: None,
            stop: None,
        })
    }

    /// Object requests from now on end by `until` (the run's end, with
    /// its grace), and a plain connection's at `stop` within half a
    /// second; one cut there is `Failure::Unfinished`.
    pub fn bound(&mut self, until: Option<Instant>, stop: &crate::util::stop::StopFlag) {
        self.until = until;
        self.stop = Some(stop.clone());
        self.objects.bound(until, stop);
    }

    /// The most a request sent now may take, by the bound.
    fn limit(&self) -> Option<Duration> {
        bound_left(self.until)
    }

    /// A failure at the bound or after a stop is an unfinished request.
    fn settled<T>(&self, outcome: Result<T, Failure>) -> Result<T, Failure> {
        settled(self.until, self.stop.as_ref(), outcome)
    }

    /// The signed URL of a GET (or a HEAD) of `key`, kept for reuse.
    fn signed_for_reading(&mut self, head: bool, key: &str) -> String {
        let (bucket, credentials) = (&self.bucket, Some(&self.credentials));
        self.signed.get_or(head, key, || {
            match head {
                true => HeadObject::new(bucket, credentials, key).sign(SIGNED_FOR),
                false => GetObject::new(bucket, credentials, key).sign(SIGNED_FOR),
            }
            .to_string()
        })
    }

    /// GET of `key`, whole or the bytes `range` (offset, length).
    pub fn get(&mut self, key: &str, range: Option<(u64, u64)>) -> Outcome {
        let url = self.signed_for_reading(false, key);
        self.objects
            .send(ObjectMethod::Get, &url, range, &[], &mut self.sink)
    }

    /// PUT of `body` as `key`, in one request.
    pub fn put(&mut self, key: &str, body: &[u8]) -> Outcome {
        let url = PutObject::new(&self.bucket, Some(&self.credentials), key).sign(SIGNED_FOR);
        let mut t =
            self.objects
                .send(ObjectMethod::Put, url.as_str(), None, body, &mut self.sink)?;
        t.bytes = body.len() as u64;
        Ok(t)
    }

    pub fn head(&mut self, key: &str) -> Outcome {
        let url = self.signed_for_reading(true, key);
        let mut t = self
            .objects
            .send(ObjectMethod::Head, &url, None, &[], &mut self.sink)?;
        t.bytes = 0;
        Ok(t)
    }

    pub fn delete(&mut self, key: &str) -> Outcome {
        let url = DeleteObject::new(&self.bucket, Some(&self.credentials), key).sign(SIGNED_FOR);
        let mut t = self.objects.send(
            ObjectMethod::Delete,
            url.as_str(),
            None,
            &[],
            &mut self.sink,
        )?;
        t.bytes = 0;
        Ok(t)
    }

    /// DeleteObjects of `keys` (one request, up to 1,000): its timing, and
    /// the keys the store could not delete, with its error codes.
    pub fn delete_many(&mut self, keys: &[String]) -> Result<(Timing, Vec<String>), Failure> {
        use rusty_s3::actions::{DeleteObjects, DeleteObjectsResponse, ObjectIdentifier};
        let ids: Vec<ObjectIdentifier> = keys
            .iter()
            .map(|k| ObjectIdentifier::new(k.clone()))
            .collect();
        let mut action = DeleteObjects::new(&self.bucket, Some(&self.credentials), ids.iter());
        action.set_quiet(true);
        let url = action.sign(SIGNED_FOR);
        let (body, md5) = action.body_with_md5();
        let started = Instant::now();
        let (mut response, retries) = send_once_more(|| {
            self.agent
                .post(url.as_str())
                .header("Content-MD5", md5.as_str())
                .send(body.as_bytes())
        })?;
        let first_byte_ns = elapsed_ns(started);
        let text = read_text(&mut response)?;
        check_status(response.status().as_u16(), &text)?;
        let failed = DeleteObjectsResponse::parse(&text)
            .map_err(|e| {
                Failure::Transport(format!("a DeleteObjects answer fathom cannot read: {e}"))
            })?
            .errors
            .into_iter()
            .map(|e| format!("{} {}", e.key, e.code))
            .collect();
        Ok((
            Timing {
                first_byte_ns,
                last_byte_ns: elapsed_ns(started),
                bytes: 0,
                retries,
            },
            failed,
        ))
    }

    /// One page of keys under `prefix` after `start_after`: the page's
    /// timing, its keys and whether more follow.
    pub fn list(
        &mut self,
        prefix: &str,
        max_keys: u32,
        start_after: Option<&str>,
    ) -> Result<(Timing, Vec<String>, bool), Failure> {
        let mut action = ListObjectsV2::new(&self.bucket, Some(&self.credentials));
        action.with_prefix(prefix);
        action.with_max_keys(max_keys as usize);
        if let Some(after) = start_after {
            action.with_start_after(after);
        }
        let url = action.sign(SIGNED_FOR);
        let started = Instant::now();
        let (mut response, retries) = send_once_more(|| self.agent.get(url.as_str()).call())?;
        let first_byte_ns = elapsed_ns(started);
        let text = response
            .body_mut()
            .with_config()
            .limit(64 << 20)
            .read_to_string()
            .map_err(|e| Failure::Transport(e.to_string()))?;
        let last_byte_ns = elapsed_ns(started);
        check_status(response.status().as_u16(), &text)?;
        let parsed = ListObjectsV2::parse_response(&text)
            .map_err(|e| Failure::Transport(format!("a LIST answer fathom cannot read: {e}")))?;
        let keys: Vec<String> = parsed.contents.into_iter().map(|c| c.key).collect();
        let more = parsed.next_continuation_token.is_some();
        Ok((
            Timing {
                first_byte_ns,
                last_byte_ns,
                bytes: 0,
                retries,
            },
            keys,
            more,
        ))
    }

    /// Starts a multipart upload of `key`: its upload id.
    pub fn create_multipart(&mut self, key: &str) -> Result<(Timing, String), Failure> {
        let url =
            CreateMultipartUpload::new(&self.bucket, Some(&self.credentials), key).sign(SIGNED_FOR);
        let started = Instant::now();
        let (mut response, retries) =
            send_once_more(|| self.agent.post(url.as_str()).send_empty())?;
        let first_byte_ns = elapsed_ns(started);
        let text = read_text(&mut response)?;
        check_status(response.status().as_u16(), &text)?;
        let parsed = CreateMultipartUpload::parse_response(&text)
            .map_err(|e| Failure::Transport(format!("an answer fathom cannot read: {e}")))?;
        Ok((
            Timing {
                first_byte_ns,
                last_byte_ns: elapsed_ns(started),
                bytes: 0,
                retries,
            },
            parsed.upload_id().to_string(),
        ))
    }

    /// One part (numbered from 1): its timing and ETag.
    pub fn upload_part(
        &mut self,
        key: &str,
        upload_id: &str,
        number: u16,
        body: &[u8],
    ) -> Result<(Timing, String), Failure> {
        let url = UploadPart::new(
            &self.bucket,
            Some(&self.credentials),
            key,
            number,
            upload_id,
        )
        .sign(SIGNED_FOR);
        let started = Instant::now();
        let limit = self.limit();
        let sent = send_once_more(|| {
            self.agent
                .put(url.as_str())
                .config()
                .timeout_global(limit)
                .build()
                .send(body)
        });
        let (mut response, retries) = self.settled(sent)?;
        let first_byte_ns = elapsed_ns(started);
        let text = self.settled(read_text(&mut response))?;
        check_status(response.status().as_u16(), &text)?;
        let etag = response
            .headers()
            .get("etag")
            .and_then(|v| v.to_str().ok())
            .ok_or_else(|| Failure::Transport("a part's answer carried no ETag".into()))?
            .to_string();
        Ok((
            Timing {
                first_byte_ns,
                last_byte_ns: elapsed_ns(started),
                bytes: body.len() as u64,
                retries,
            },
            etag,
        ))
    }

    pub fn complete_multipart(&mut self, key: &str, upload_id: &str, etags: &[String]) -> Outcome {
        let action = CompleteMultipartUpload::new(
            &self.bucket,
            Some(&self.credentials),
            key,
            upload_id,
            etags.iter().map(String::as_str),
        );
        let url = action.sign(SIGNED_FOR);
        let body = action.body();
        let agent = self.agent.clone();
        let sink = &mut self.sink;
        let mut t = timed(|| agent.post(url.as_str()).send(body.as_bytes()), sink)?;
        t.bytes = 0;
        Ok(t)
    }

    pub fn abort_multipart(&mut self, key: &str, upload_id: &str) {
        let url = rusty_s3::actions::AbortMultipartUpload::new(
            &self.bucket,
            Some(&self.credentials),
            key,
            upload_id,
        )
        .sign(SIGNED_FOR);
        let _ = self.agent.delete(url.as_str()).call();
    }

    /// Whether the bucket is there to work in: Ok(false) when the store
    /// says it is not, the store's error otherwise.
    pub fn bucket_exists(&mut self) -> Result<bool, Failure> {
        let url = HeadBucket::new(&self.bucket, Some(&self.credentials)).sign(SIGNED_FOR);
        let (mut response, _) = send_once_more(|| self.agent.head(url.as_str()).call())?;
        let status = response.status().as_u16();
        let _ = read_text(&mut response);
        match status {
            200..=299 => Ok(true),
            404 => Ok(false),
            // HEAD has no body to name the error: a GET of the bucket's
            // listing does (InvalidAccessKeyId, SignatureDoesNotMatch).
            _ => match self.list("", 1, None) {
                Ok(_) => Ok(true),
                Err(Failure::Status { status: 404, .. }) => Ok(false),
                Err(e) => Err(e),
            },
        }
    }

    pub fn create_bucket(&mut self) -> Result<(), Failure> {
        let url =
            rusty_s3::actions::CreateBucket::new(&self.bucket, &self.credentials).sign(SIGNED_FOR);
        let (mut response, _) = send_once_more(|| self.agent.put(url.as_str()).send_empty())?;
        let text = read_text(&mut response)?;
        check_status(response.status().as_u16(), &text)
    }
}

/// The gate's questions about keys, answered by this client.
impl crate::gate::bucket::Keys for S3Client {
    fn keys_under(&mut self, prefix: &str, max: u32) -> Result<(Vec<String>, bool), String> {
        self.list(prefix, max, None)
            .map(|(_, keys, more)| (keys, more))
            .map_err(|e| e.to_string())
    }

    fn holds(&mut self, key: &str) -> bool {
        self.head(key).is_ok()
    }

    fn read_small(&mut self, key: &str, max: u64) -> Result<Vec<u8>, String> {
        let url = self.signed_for_reading(false, key);
        let (mut response, _) =
            send_once_more(|| self.agent.get(url.as_str()).call()).map_err(|e| e.to_string())?;
        let status = response.status().as_u16();
        let body = response
            .body_mut()
            .with_config()
            .limit(max)
            .read_to_vec()
            .map_err(|e| e.to_string())?;
        check_status(status, &String::from_utf8_lossy(&body)).map_err(|e| e.to_string())?;
        Ok(body)
    }

    fn put_small(&mut self, key: &str, body: &[u8]) -> Result<(), String> {
        self.put(key, body).map(|_| ()).map_err(|e| e.to_string())
    }

    fn delete_keys(&mut self, keys: &[String]) -> Result<(), String> {
        match self.delete_many(keys) {
            Ok((_, failed)) if failed.is_empty() => Ok(()),
            Ok((_, failed)) => Err(format!("not deleted: {}", failed.join(", "))),
            Err(e) => Err(e.to_string()),
        }
    }

    fn delete_key(&mut self, key: &str) -> Result<(), String> {
        match self.delete(key) {
            Ok(_) | Err(Failure::Status { status: 404, .. }) => Ok(()),
            Err(e) => Err(e.to_string()),
        }
    }
}

/// Object requests through ureq's pool: TLS endpoints.
struct UreqObjects {
    agent: ureq::Agent,
    until: Option<Instant>,
    stop: Option<crate::util::stop::StopFlag>,
}

impl ObjectTransport for UreqObjects {
    fn bound(&mut self, until: Option<Instant>, stop: &crate::util::stop::StopFlag) {
        self.until = until;
        self.stop = Some(stop.clone());
    }

    fn send(
        &mut self,
        method: ObjectMethod,
        url: &str,
        range: Option<(u64, u64)>,
        body: &[u8],
        sink: &mut [u8],
    ) -> Outcome {
        let limit = bound_left(self.until);
        let agent = &self.agent;
        let outcome = timed(
            || {
                let request = match method {
                    ObjectMethod::Get => agent.get(url),
                    ObjectMethod::Head => agent.head(url),
                    ObjectMethod::Delete => agent.delete(url),
                    ObjectMethod::Put => {
                        return agent
                            .put(url)
                            .config()
                            .timeout_global(limit)
                            .build()
                            .send(body);
                    }
                };
                let request = match range {
                    Some((off, len)) => {
                        request.header("Range", format!("bytes={off}-{}", off + len - 1))
                    }
                    None => request,
                };
                request.config().timeout_global(limit).build().call()
            },
            sink,
        );
        settled(self.until, self.stop.as_ref(), outcome)
    }
}

/// The most a request sent now may take, by the bound `until`.
fn bound_left(until: Option<Instant>) -> Option<Duration> {
    until.map(|u| {
        u.saturating_duration_since(Instant::now())
            .max(Duration::from_millis(1))
    })
}

/// A failure at the bound or after a stop is an unfinished request.
fn settled<T>(
    until: Option<Instant>,
    stop: Option<&crate::util::stop::StopFlag>,
    outcome: Result<T, Failure>,
) -> Result<T, Failure> {
    let cut = until.is_some_and(|u| Instant::now() >= u) || stop.is_some_and(|s| s.is_set());
    match outcome {
        Err(Failure::Transport(_)) if cut => Err(Failure::Unfinished),
        other => other,
    }
}

fn elapsed_ns(started: Instant) -> u64 {
    started.elapsed().as_nanos() as u64
}

/// Sends a request, and once more when it failed before any answer: a
/// store may close a kept-alive connection just as it is reused.
fn send_once_more(
    mut send: impl FnMut() -> Result<ureq::http::Response<ureq::Body>, ureq::Error>,
) -> Result<(ureq::http::Response<ureq::Body>, u32), Failure> {
    match send() {
        Ok(r) => Ok((r, 0)),
        // The first failure is the one to name: a second try may fail
        // for a reason of its own (a server that took one connection).
        Err(first) if retriable(&first) => send()
            .map(|r| (r, 1))
            .map_err(|_| Failure::Transport(first.to_string())),
        Err(e) => Err(Failure::Transport(e.to_string())),
    }
}

fn retriable(e: &ureq::Error) -> bool {
    matches!(e, ureq::Error::Io(_) | ureq::Error::Protocol(_))
}

/// Times a request to its headers and to the end of its body (read and
/// dropped), and turns an error status into a failure naming its code.
fn timed(
    send: impl FnMut() -> Result<ureq::http::Response<ureq::Body>, ureq::Error>,
    sink: &mut [u8],
) -> Outcome {
    let started = Instant::now();
    let (mut response, retries) = send_once_more(send)?;
    let first_byte_ns = elapsed_ns(started);
    let status = response.status().as_u16();
    if !(200..300).contains(&status) {
        let text = read_text(&mut response).unwrap_or_default();
        check_status(status, &text)?;
    }
    let mut reader = response.body_mut().with_config().limit(u64::MAX).reader();
    let mut bytes = 0u64;
    loop {
        match reader.read(sink) {
            Ok(0) => break,
            Ok(n) => bytes += n as u64,
            Err(e) => return Err(Failure::Transport(format!("the body broke off: {e}"))),
        }
    }
    Ok(Timing {
        first_byte_ns,
        last_byte_ns: elapsed_ns(started),
        bytes,
        retries,
    })
}

fn read_text(response: &mut ureq::http::Response<ureq::Body>) -> Result<String, Failure> {
    response
        .body_mut()
        .with_config()
        .limit(16 << 20)
        .read_to_string()
        .map_err(|e| Failure::Transport(e.to_string()))
}

/// An error status as a failure, with the `<Code>` of S3's error body.
fn check_status(status: u16, body: &str) -> Result<(), Failure> {
    if (200..300).contains(&status) {
        return Ok(());
    }
    Err(status_failure(status, body))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_error_body_names_its_code() {
        let body = "<?xml version=\"1.0\"?><Error><Code>SignatureDoesNotMatch</Code><Message>x</Message></Error>";
        let f = check_status(403, body).unwrap_err();
        assert_eq!(f.key(), "403 SignatureDoesNotMatch");
        assert_eq!(check_status(500, "").unwrap_err().key(), "500");
        assert!(check_status(206, "").is_ok());
    }

    /// Answers each of `answers` once on 127.0.0.1, returning what each
    /// request sent (its head and body).
    fn store(answers: Vec<&'static str>) -> (String, std::thread::JoinHandle<Vec<String>>) {
        use std::io::{Read, Write};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let address = format!("http://{}", listener.local_addr().unwrap());
        let served = std::thread::spawn(move || {
            let mut seen = Vec::new();
            for answer in answers {
                let (mut conn, _) = listener.accept().unwrap();
                conn.set_read_timeout(Some(Duration::from_millis(300)))
                    .unwrap();
                let mut got = Vec::new();
                let mut buf = [0u8; 4096];
                // Until the client waits for the answer: its head, and a body
                // as long as it said.
                while let Ok(n) = conn.read(&mut buf) {
                    got.extend_from_slice(&buf[..n]);
                    let text = String::from_utf8_lossy(&got).to_lowercase();
                    if let Some(end) = text.find("\r\n\r\n") {
                        let length = text
                            .lines()
                            .find_map(|l| l.strip_prefix("content-length: "))
                            .map_or(0, |n| n.trim().parse().unwrap());
                        if got.len() >= end + 4 + length {
                            break;
                        }
                    }
                    if n == 0 {
                        break;
                    }
                }
                conn.write_all(answer.as_bytes()).unwrap();
                seen.push(String::from_utf8_lossy(&got).into_owned());
            }
            seen
        });
        (address, served)
    }

    /// ureq's way (an https:// store's) sends each object request as the
    /// plain connection does: the method, the range, the body; it reads
    /// and counts the answer, and names an error's code.
    #[test]
    fn object_requests_through_ureq_are_sent_and_timed() {
        let (address, served) = store(vec![
            "HTTP/1.1 206 Partial Content\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello",
            "HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
            "HTTP/1.1 404 Not Found\r\nContent-Length: 46\r\nConnection: close\r\n\r\n<Error><Code>NoSuchKey</Code></Error>         ",
        ]);
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .build()
            .into();
        let mut objects = UreqObjects {
            agent,
            until: None,
            stop: None,
        };
        let mut sink = vec![0; 64];
        let url = format!("{address}/b/k?X-Amz-Signature=s");
        let got = objects
            .send(ObjectMethod::Get, &url, Some((10, 5)), &[], &mut sink)
            .unwrap();
        assert_eq!(got.bytes, 5);
        assert!(got.first_byte_ns <= got.last_byte_ns);
        objects
            .send(ObjectMethod::Put, &url, None, b"data!", &mut sink)
            .unwrap();
        let missing = objects
            .send(ObjectMethod::Head, &url, None, &[], &mut sink)
            .unwrap_err();
        assert_eq!(
            missing.key(),
            "404",
            "a HEAD's answer has no body to name a code"
        );
        let seen = served.join().unwrap();
        assert!(
            seen[0].starts_with("GET /b/k?X-Amz-Signature=s "),
            "{}",
            seen[0]
        );
        assert!(
            seen[0].to_lowercase().contains("range: bytes=10-14"),
            "{}",
            seen[0]
        );
        assert!(seen[1].starts_with("PUT /b/k"), "{}", seen[1]);
        assert!(seen[1].ends_with("data!"), "{}", seen[1]);
        assert!(seen[2].starts_with("HEAD /b/k"), "{}", seen[2]);
    }
}
