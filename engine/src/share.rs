//! Share links: a scenario packed into a compact, URL-safe string with a format tag and a
//! version, so that every link ever shared keeps opening.
//!
//! Version 1: `w1.` followed by the scenario's JSON, compressed with raw DEFLATE and written
//! in unpadded base64url (RFC 4648 §5). Links are deflated by [`crate::deflate`] and
//! inflated by [`crate::inflate`]. Links of earlier builds were deflated by `miniz_oxide`'s
//! level 9: they have other bytes, as long, and still open (`tests/links/`).
//!
//! Decoding enforces limits on every step (link length, inflated size, then the scenario's
//! own limits on brokers, records and timeline length), so no link can hang or exhaust the
//! page; every error names what was wrong and the limit.

use std::fmt;

use crate::scenario::Scenario;

/// The tag and version of links this build writes.
pub const CURRENT_PREFIX: &str = "w1.";
/// Longest link payload accepted (characters after the prefix).
pub const MAX_LINK_CHARS: usize = 200_000;
/// Largest scenario JSON a link may inflate to.
pub const MAX_INFLATED_BYTES: usize = 1 << 20;

/// What was wrong with a link.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShareError {
    /// The part at fault: `link`, `version`, `encoding`, `compression`, `json`, or a
    /// scenario field such as `brokers` or `timeline[3].broker`.
    pub field: String,
    pub message: String,
}

impl fmt::Display for ShareError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.field, self.message)
    }
}

impl std::error::Error for ShareError {}

fn err(field: &str, message: impl Into<String>) -> ShareError {
    ShareError {
        field: field.to_string(),
        message: message.into(),
    }
}

const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/// Unpadded base64url.
pub fn base64url_encode(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        let chars = chunk.len() + 1;
        for i in 0..chars {
            out.push(ALPHABET[((n >> (18 - 6 * i)) & 63) as usize] as char);
        }
    }
    out
}

/// Decodes unpadded base64url; names the first bad character's position.
pub fn base64url_decode(text: &str) -> Result<Vec<u8>, ShareError> {
    let value = |c: u8, i: usize| -> Result<u32, ShareError> {
        match c {
            b'A'..=b'Z' => Ok(u32::from(c - b'A')),
            b'a'..=b'z' => Ok(u32::from(c - b'a') + 26),
            b'0'..=b'9' => Ok(u32::from(c - b'0') + 52),
            b'-' => Ok(62),
            b'_' => Ok(63),
            _ => Err(err(
                "encoding",
                format!("character {} of the link is not base64url", i + 1),
            )),
        }
    };
    let bytes = text.as_bytes();
    if bytes.len() % 4 == 1 {
        return Err(err(
            "encoding",
            "the link's length is not a valid base64url length (was it cut short?)",
        ));
    }
    let mut out = Vec::with_capacity(bytes.len() / 4 * 3 + 2);
    for (ci, chunk) in bytes.chunks(4).enumerate() {
        let mut n = 0u32;
        for (j, &c) in chunk.iter().enumerate() {
            n |= value(c, ci * 4 + j)? << (18 - 6 * j);
        }
        out.push((n >> 16) as u8);
        if chunk.len() > 2 {
            out.push((n >> 8) as u8);
        }
        if chunk.len() > 3 {
            out.push(n as u8);
        }
    }
    Ok(out)
}

/// Packs a scenario into a link payload (`w1.…`).
pub fn encode(scenario: &Scenario) -> String {
    let json = crate::scenario_json::scenario(scenario, false).into_bytes();
    let packed = crate::deflate::deflate(&json);
    format!("{CURRENT_PREFIX}{}", base64url_encode(&packed))
}

/// Opens a link payload of any version this build knows.
pub fn decode(link: &str) -> Result<Scenario, ShareError> {
    let link = link.trim();
    if link.is_empty() {
        return Err(err("link", "the link holds no scenario"));
    }
    let Some((tag, payload)) = link.split_once('.') else {
        return Err(err(
            "version",
            "the link has no format tag (it should start with w1.)",
        ));
    };
    if payload.len() > MAX_LINK_CHARS {
        return Err(err(
            "link",
            format!(
                "the scenario in the link is {} characters long; the limit is {MAX_LINK_CHARS}",
                payload.len()
            ),
        ));
    }
    match tag {
        "w1" => decode_v1(payload),
        other => Err(err(
            "version",
            format!(
                "the link's format {} is not one this build reads (it reads w1)",
                crate::error::quoted(&other.chars().take(12).collect::<String>())
            ),
        )),
    }
}

fn decode_v1(payload: &str) -> Result<Scenario, ShareError> {
    let packed = base64url_decode(payload)?;
    let json = crate::inflate::inflate(&packed, MAX_INFLATED_BYTES).map_err(|e| match e {
        crate::inflate::InflateError::TooLarge => err(
            "compression",
            format!("the scenario inflates to more than {MAX_INFLATED_BYTES} bytes"),
        ),
        crate::inflate::InflateError::Damaged => err(
            "compression",
            "the link is damaged: its compressed data does not inflate (was it cut short or altered?)",
        ),
    })?;
    let text =
        std::str::from_utf8(&json).map_err(|_| err("json", "the scenario is not UTF-8 text"))?;
    Scenario::from_json(text).map_err(|e| ShareError {
        field: e.field,
        message: e.message,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64url_round_trips_and_rejects_bad_text() {
        for n in 0..40usize {
            let bytes: Vec<u8> = (0..n).map(|i| (i * 37 % 256) as u8).collect();
            assert_eq!(base64url_decode(&base64url_encode(&bytes)).unwrap(), bytes);
        }
        // RFC 4648 test vectors, without padding.
        assert_eq!(base64url_encode(b"foobar"), "Zm9vYmFy");
        assert_eq!(base64url_encode(b"fo"), "Zm8");
        assert_eq!(base64url_encode(&[0xfb, 0xff]), "-_8");
        assert_eq!(base64url_decode("Zm8").unwrap(), b"fo");
        assert_eq!(
            base64url_decode("Zm9v!mFy").unwrap_err().message,
            "character 5 of the link is not base64url"
        );
        assert!(base64url_decode("Zm9vY").is_err());
    }

    #[test]
    fn presets_round_trip_through_links() {
        for p in crate::presets::PRESETS {
            let s = crate::presets::preset(p.name).unwrap();
            let link = encode(&s);
            assert!(link.starts_with("w1."));
            assert!(link.len() < p.json.len(), "{}: compressed", p.name);
            assert_eq!(decode(&link).unwrap(), s);
        }
    }

    #[test]
    fn bad_links_say_what_is_wrong() {
        assert_eq!(decode("").unwrap_err().field, "link");
        assert_eq!(decode("nonsense").unwrap_err().field, "version");
        assert_eq!(decode("w9.AAAA").unwrap_err().field, "version");
        assert_eq!(decode("w1.%%%%").unwrap_err().field, "encoding");
        let good = encode(&Scenario::default());
        let cut = &good[..good.len() - 5];
        let e = decode(cut).unwrap_err();
        assert!(e.field == "compression" || e.field == "encoding", "{e}");
        let huge = format!("w1.{}", "A".repeat(MAX_LINK_CHARS + 1));
        assert_eq!(decode(&huge).unwrap_err().field, "link");
        // A scenario with too many brokers: the error names the field and the range.
        let s = Scenario::default();
        let text = serde_json::to_string(&s)
            .unwrap()
            .replace("\"brokers\":3", "\"brokers\":50");
        let link = format!(
            "w1.{}",
            base64url_encode(&crate::deflate::deflate(text.as_bytes()))
        );
        let e = decode(&link).unwrap_err();
        assert_eq!(e.field, "brokers");
        assert!(e.message.contains("1..=12"));
        // A zip bomb: 2 MiB of spaces.
        let bomb = vec![b' '; 2 << 20];
        let link = format!("w1.{}", base64url_encode(&crate::deflate::deflate(&bomb)));
        assert!(link.len() < 10_000);
        assert!(decode(&link)
            .unwrap_err()
            .message
            .contains("inflates to more than"));
    }
}
