//! fio's http engine in S3 mode (`ioengine=http`, `http_mode=s3`) as an
//! object-store run: the job's `filename` under `http_host` becomes an
//! `s3://` target, each block an object (fio's `http_object_mode=block`,
//! objects of `bs`) or ranges of one object (`range`), reads GETs,
//! writes PUTs and trims DELETEs.

use super::ini::Opt;
use super::job::{Action, Job};
use super::options::{flag, value};
use crate::input::aws::AwsCredentials;

use super::job::HttpJob;

fn http(job: &mut Job) -> &mut HttpJob {
    job.http.get_or_insert_with(HttpJob::default)
}

pub(super) fn host(job: &mut Job, opt: &Opt) -> Result<Action, String> {
    http(job).host = Some(value(opt)?.trim_end_matches('/').to_string());
    Ok(Action::Done)
}

pub(super) fn https(job: &mut Job, opt: &Opt) -> Result<Action, String> {
    http(job).https = match opt.value.as_deref() {
        Some("insecure") => {
            return Err(
                "https=insecure: fathom checks the store's certificate (rustls, the system's roots)"
                    .into(),
            );
        }
        _ => flag(opt)?,
    };
    Ok(Action::Done)
}

pub(super) fn mode(_job: &mut Job, opt: &Opt) -> Result<Action, String> {
    match value(opt)? {
        "s3" => Ok(Action::Done),
        other => Err(format!(
            "http_mode={other}: fathom speaks S3 (http_mode=s3) only"
        )),
    }
}

pub(super) fn object_mode(job: &mut Job, opt: &Opt) -> Result<Action, String> {
    http(job).range_mode = match value(opt)? {
        "block" => false,
        "range" => true,
        other => return Err(format!("http_object_mode={other}: block or range")),
    };
    Ok(Action::Done)
}

pub(super) fn key_id(job: &mut Job, opt: &Opt) -> Result<Action, String> {
    http(job).key_id = Some(value(opt)?.to_string());
    Ok(Action::Done)
}

pub(super) fn key(job: &mut Job, opt: &Opt) -> Result<Action, String> {
    http(job).key = Some(value(opt)?.to_string());
    Ok(Action::Done)
}

pub(super) fn security_token(job: &mut Job, opt: &Opt) -> Result<Action, String> {
    http(job).token = Some(value(opt)?.to_string());
    Ok(Action::Done)
}

pub(super) fn region(job: &mut Job, opt: &Opt) -> Result<Action, String> {
    job.set("s3_region", value(opt)?);
    Ok(Action::Done)
}

/// The keys the job signs with, if it names them (never written into the
/// translation: `--explain` prints it).
pub(super) fn credentials(job: &Job) -> Option<AwsCredentials> {
    let h = job.http.as_ref()?;
    Some(AwsCredentials {
        key: h.key_id.clone()?,
        secret: h.key.clone()?,
        token: h.token.clone(),
        source: "the job file's http_s3_keyid and http_s3_key".into(),
    })
}

/// Makes an http job an object-store run: its target, endpoint, objects
/// and operations.
pub(super) fn settle(job: &mut Job, notes: &mut Vec<String>) -> Result<(), String> {
    let Some(h) = job.http.clone() else {
        return Ok(());
    };
    let host = h
        .host
        .ok_or("ioengine=http: http_host names the store (HOST[:PORT])")?;
    let file = job.files.first().cloned().ok_or(
        "ioengine=http: filename names the object (/BUCKET/KEY, or /KEY with a bucket's own host)",
    )?;
    let path = file.strip_prefix('/').ok_or_else(|| {
        format!("filename={file}: an object's path starts with '/' (fio puts it after http_host)")
    })?;
    // BUCKET.s3.REGION.amazonaws.com: the bucket in the host's first
    // label (virtual-hosted style); otherwise the path's first part.
    let (endpoint_host, bucket, key, virtual_host) = match host.split_once(".s3.") {
        Some((bucket, rest)) => (
            format!("s3.{rest}"),
            bucket.to_string(),
            path.to_string(),
            true,
        ),
        None => {
            let (bucket, key) = path.split_once('/').unwrap_or((path, ""));
            (host.clone(), bucket.to_string(), key.to_string(), false)
        }
    };
    let scheme = if h.https { "https" } else { "http" };
    job.files = vec![format!("s3://{bucket}/{key}")];
    job.set("s3_endpoint", format!("{scheme}://{endpoint_host}"));
    if virtual_host {
        job.set("s3_virtual_host", "true");
    }
    let bs = job.knob("bs").unwrap_or("4096").to_string();
    let size = job.knob("size").map(str::to_string);
    // fio makes io_size's worth of requests when it is given.
    let amount = job.knob("io_size").map(str::to_string).or(size.clone());
    let rw = job.knob("rw").unwrap_or("read").to_string();
    let mix = match rw.as_str() {
        "read" | "randread" => "get=1".to_string(),
        "write" | "randwrite" => "put=1".to_string(),
        "trim" | "randtrim" => "delete=1".to_string(),
        "readwrite" | "randrw" => {
            let reads: u32 = job
                .knob("rwmix_read")
                .and_then(|r| r.parse().ok())
                .unwrap_or(50);
            format!("get={reads},put={}", 100 - reads)
        }
        other => {
            return Err(format!(
                "rw={other}: the http engine reads, writes or trims"
            ));
        }
    };
    job.set("mix", mix);
    let bytes = |s: &str| crate::util::units::parse_size(s).unwrap_or(0);
    if h.range_mode {
        // One object of the job's size, read in ranges of bs.
        job.set("object_size", size.clone().unwrap_or_else(|| bs.clone()));
        job.set("objects", "1");
        job.set("s3_ranges", "true");
    } else {
        // An object per block: size / bs of them, each bs bytes.
        let count = amount
            .as_deref()
            .map_or(1, |s| (bytes(s) / bytes(&bs).max(1)).max(1));
        job.set("object_size", bs.clone());
        job.set("objects", count.to_string());
    }
    notes.push(format!(
        "job {}: ioengine=http: fathom names its own keys under s3://{bucket}/{key} (fio names each block's object {file}_OFFSET_LENGTH), uploads what a read or trim needs first, untimed, and deletes only what it made",
        job.name
    ));
    if job.knob("verify").is_some() {
        job.unset("verify");
        notes.push(format!(
            "job {}: verify with ioengine=http: fathom does not read objects back to check them yet",
            job.name
        ));
    }
    // The engine makes one request at a time; the disk knobs that an
    // object has no use for go.
    for knob in [
        "iodepth",
        "size",
        "io_size",
        "direct",
        "buffered",
        "invalidate",
        "engine",
        "ramp_in_pass",
        "rwmix_read",
    ] {
        job.unset(knob);
    }
    // Ranges keep their size and order; whole objects need neither.
    if !h.range_mode {
        job.unset("bs");
        job.unset("rw");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_aws_virtual_host_names_the_bucket_and_a_path_names_it_otherwise() {
        let mut job = Job::with_fio_defaults("create");
        job.files = vec!["/k/e.y".into()];
        job.set("rw", "write");
        job.set("bs", "4k");
        job.set("size", "64k");
        job.http = Some(HttpJob {
            host: Some("bucket-name.s3.eu-central-1.amazonaws.com".into()),
            https: true,
            ..HttpJob::default()
        });
        let mut notes = Vec::new();
        settle(&mut job, &mut notes).unwrap();
        assert_eq!(job.files, ["s3://bucket-name/k/e.y"]);
        assert_eq!(
            job.knob("s3_endpoint"),
            Some("https://s3.eu-central-1.amazonaws.com")
        );
        assert_eq!(job.knob("s3_virtual_host"), Some("true"));
        assert_eq!(job.knob("mix"), Some("put=1"));
        assert_eq!(job.knob("objects"), Some("16"));
        assert_eq!(job.knob("object_size"), Some("4k"));

        let mut job = Job::with_fio_defaults("read");
        job.files = vec!["/bench/data".into()];
        job.set("bs", "1m");
        job.set("size", "8m");
        job.http = Some(HttpJob {
            host: Some("127.0.0.1:8333".into()),
            range_mode: true,
            ..HttpJob::default()
        });
        settle(&mut job, &mut notes).unwrap();
        assert_eq!(job.files, ["s3://bench/data"]);
        assert_eq!(job.knob("s3_endpoint"), Some("http://127.0.0.1:8333"));
        assert_eq!(job.knob("objects"), Some("1"));
        assert_eq!(job.knob("object_size"), Some("8m"));
        assert_eq!(job.knob("s3_ranges"), Some("true"));
    }
}
