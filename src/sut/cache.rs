//! The answer cache: one JSON file per (system settings, case input), so re-judging or
//! re-rendering a run does not call the system again. Only answers are cached, never errors.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use super::SutRequest;
use super::answer::Reply;
use crate::fsio::{Mode, WriteError, WriteStep};

/// Bumped when the key or the file layout changes, so old entries are simply missed.
const CACHE_VERSION: u32 = 1;

/// A directory of cached answers.
#[derive(Debug, Clone)]
pub(crate) struct AnswerCache {
    dir: PathBuf,
    /// Set once a write failed and was reported, so a run of 1,000 cases warns once.
    warned: Arc<AtomicBool>,
}

impl AnswerCache {
    pub(crate) fn new(dir: PathBuf) -> AnswerCache {
        AnswerCache { dir, warned: Arc::default() }
    }

    /// sha256 of the system's identity, the whole request and which attempt at it this is (a
    /// repeated case asks `repeat` times; each attempt has its own answer). The first attempt's
    /// key is the one caches written before attempts were keyed hold.
    pub(crate) fn key(&self, identity: &Value, request: &SutRequest, attempt: u32) -> String {
        let mut material = json!({
            "v": CACHE_VERSION,
            "sut": identity,
            "id": request.id,
            "prompt": request.prompt,
            "case": request.case,
        });
        if attempt > 1
            && let Some(object) = material.as_object_mut()
        {
            object.insert("attempt".into(), attempt.into());
        }
        hex::encode(Sha256::digest(material.to_string().as_bytes()))
    }

    /// The cached answer; a missing, unreadable or corrupt entry is a miss, and so is one holding
    /// no answer (null or blank `output`: a hand-edited or foreign entry) — a fresh blank answer
    /// is a backend error, so a stored one must not be judged as an answer.
    pub(crate) fn get(&self, key: &str) -> Option<Reply> {
        let text = crate::fsio::read_capped(&self.dir.join(format!("{key}.json")), crate::fsio::ANSWER_CACHE).ok()?;
        let reply: Reply = serde_json::from_slice(&text).ok()?;
        super::answer::no_answer(&reply.output).is_none().then_some(reply)
    }

    /// Stores an answer. Failing to write only costs a later call, so the run goes on, but says
    /// so once (with the directory and the OS error): a cache that silently never fills looks
    /// like a working one. The entry goes to a temporary file renamed into place, so a reader
    /// (another job sharing the cache) never sees half of one and a full disk leaves none.
    pub(crate) fn put(&self, key: &str, reply: &Reply) {
        if let Err(e) = self.write(key, reply)
            && !self.warned.swap(true, Ordering::Relaxed)
        {
            crate::warnings::warn(format!(
                "the answer cache cannot be written ({e}); answers of this run are not cached"
            ));
        }
    }

    fn write(&self, key: &str, reply: &Reply) -> Result<(), WriteError> {
        std::fs::create_dir_all(&self.dir).map_err(|source| WriteError {
            path: self.dir.clone(),
            action: WriteStep::Create,
            source,
        })?;
        // A reply is strings, numbers and JSON values: serialising it cannot fail.
        let Ok(text) = serde_json::to_vec(reply) else { return Ok(()) };
        crate::fsio::write_atomic(&self.dir.join(format!("{key}.json")), &text, Mode::CACHE)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(prompt: &str) -> SutRequest {
        SutRequest { id: "c1".into(), prompt: prompt.into(), case: json!({"prompt": prompt}) }
    }

    #[test]
    fn round_trip_and_keys_differ_by_input_and_settings() {
        let dir = tempfile::tempdir().unwrap();
        let cache = AnswerCache::new(dir.path().join("answers"));
        let id = json!({"type": "command", "command": "./a.sh"});
        let key = cache.key(&id, &request("list files"), 1);
        assert_eq!(key, cache.key(&id, &request("list files"), 1));
        assert_ne!(key, cache.key(&id, &request("remove files"), 1));
        assert_ne!(key, cache.key(&json!({"type": "command", "command": "./b.sh"}), &request("list files"), 1));
        // Each attempt of a repeated case has its own answer.
        assert_ne!(key, cache.key(&id, &request("list files"), 2));
        assert_ne!(cache.key(&id, &request("list files"), 2), cache.key(&id, &request("list files"), 3));
        assert!(cache.get(&key).is_none());
        let reply = Reply { output: json!("ls"), raw: "ls\n".into(), usage: None };
        cache.put(&key, &reply);
        assert_eq!(cache.get(&key), Some(reply));
    }

    #[test]
    fn a_corrupt_entry_is_a_miss() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("abc.json"), "{not json").unwrap();
        assert!(AnswerCache::new(dir.path().to_path_buf()).get("abc").is_none());
    }

    #[test]
    fn an_entry_holding_no_answer_is_a_miss() {
        let dir = tempfile::tempdir().unwrap();
        let cache = AnswerCache::new(dir.path().to_path_buf());
        for (key, output) in [("blank", json!(" \n")), ("null", Value::Null), ("answer", json!("ls"))] {
            cache.put(key, &Reply { output, raw: String::new(), usage: None });
        }
        assert!(cache.get("blank").is_none());
        assert!(cache.get("null").is_none());
        assert!(cache.get("answer").is_some());
    }
}
