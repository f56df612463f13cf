//! Where a session comes from and goes to: the page URL (share links, preset links, embed
//! options), local storage, and files. The parsing is pure and tested natively; the browser
//! glue is small.

use watermark_engine::presets::{preset, PRESETS};
use watermark_engine::share;
use watermark_engine::Scenario;

/// Local storage key of the current session (a share-link payload).
pub const STORAGE_KEY: &str = "watermark.session.v1";
/// Local storage key of how far the stored session had run (simulated ms, decimal). Saved
/// apart from the payload so that a session that plays on need not be encoded again.
pub const TIME_KEY: &str = "watermark.session.time.v1";

/// Where a restored session reopens: the later of its payload's `end_ms` (the time of its
/// last action) and the saved time, if that is a number within the engine's time limit;
/// anything else in storage is ignored.
pub fn restored_time(end_ms: Option<u64>, stored_time: Option<&str>) -> u64 {
    let saved = stored_time
        .and_then(|t| t.trim().parse::<u64>().ok())
        .filter(|t| *t <= watermark_engine::scenario::MAX_TIME_MS)
        .unwrap_or(0);
    end_ms.unwrap_or(0).max(saved)
}

/// Options read from the page URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UrlOptions {
    /// `?embed=1`: the minimal view for an iframe.
    pub embed: bool,
    /// `?autoplay=1`: start playing.
    pub autoplay: bool,
    /// `?controls=0`: hide the time controls (embed only).
    pub controls: bool,
    /// `?t=MS`: start at this simulated time.
    pub start_ms: Option<u64>,
    /// `?preset=NAME`.
    pub preset: Option<String>,
    /// `#s=w1.…`: a shared scenario.
    pub link: Option<String>,
}

/// Reads `search` (`?a=b&…`) and `hash` (`#s=…`).
pub fn parse_url(search: &str, hash: &str) -> UrlOptions {
    let params: Vec<(String, String)> = search
        .trim_start_matches('?')
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|p| match p.split_once('=') {
            Some((k, v)) => (k.to_string(), v.to_string()),
            None => (p.to_string(), String::new()),
        })
        .collect();
    let get = |k: &str| {
        params
            .iter()
            .find(|(key, _)| key == k)
            .map(|(_, v)| v.as_str())
    };
    let flag = |k: &str, default: bool| match get(k) {
        Some("0") | Some("false") | Some("no") => false,
        Some(_) => true,
        None => default,
    };
    let hash = hash.trim_start_matches('#');
    let link = hash
        .split('&')
        .find_map(|p| p.strip_prefix("s="))
        .map(str::to_string)
        .or_else(|| hash.starts_with("w1.").then(|| hash.to_string()))
        .filter(|l| !l.is_empty());
    UrlOptions {
        embed: flag("embed", false),
        autoplay: flag("autoplay", false),
        controls: flag("controls", true),
        start_ms: get("t")
            .and_then(|t| t.parse().ok())
            .map(|t: u64| t.min(watermark_engine::scenario::MAX_TIME_MS)),
        preset: get("preset").map(str::to_string),
        link,
    }
}

/// What the page opens, and what to tell the person about it.
#[derive(Debug, Clone, PartialEq)]
pub struct Opening {
    pub scenario: Scenario,
    pub notice: Option<String>,
    /// The scenario came from storage (a restored session).
    pub restored: bool,
}

/// Chooses the scenario to open: a shared link, then a preset, then the stored session,
/// then the default. A bad link or preset opens the default and says what was wrong.
pub fn choose_opening(options: &UrlOptions, stored: Option<&str>, default: Scenario) -> Opening {
    if let Some(link) = &options.link {
        return match share::decode(link) {
            Ok(scenario) => Opening {
                scenario,
                notice: None,
                restored: false,
            },
            Err(e) => Opening {
                scenario: default,
                notice: Some(format!(
                    "This link could not be opened ({}: {}). Showing the default scenario instead.",
                    e.field, e.message
                )),
                restored: false,
            },
        };
    }
    if let Some(name) = &options.preset {
        return match preset(name) {
            Ok(scenario) => Opening {
                scenario,
                notice: None,
                restored: false,
            },
            Err(e) => Opening {
                scenario: default,
                notice: Some(format!(
                    "{}. Showing the default scenario instead.",
                    e.message
                )),
                restored: false,
            },
        };
    }
    if !options.embed {
        if let Some(Ok(scenario)) = stored.map(share::decode) {
            return Opening {
                scenario,
                notice: Some("Restored your last session. Reset starts over.".into()),
                restored: true,
            };
        }
    }
    Opening {
        scenario: default,
        notice: None,
        restored: false,
    }
}

/// The link to a scenario at a time, on the page at `base` (origin + path).
pub fn share_link(base: &str, scenario: &Scenario, time_ms: u64) -> String {
    format!("{base}?t={time_ms}#s={}", share::encode(scenario))
}

/// Options for an embed snippet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EmbedOptions {
    pub autoplay: bool,
    pub start_ms: u64,
    pub controls: bool,
    /// The iframe's height in px: fixed, or the height it has until the embed reports its
    /// content's height (`fit`).
    pub height: u32,
    /// The snippet carries the listener that sizes the iframe to its content.
    pub fit: bool,
}

/// The name of the built-in preset this scenario is, unchanged (no input added), if any: its
/// snippet and links can then say `?preset=NAME` instead of carrying the whole scenario.
/// The presets are parsed once: the Share panel asks on every frame while it plays.
pub fn unchanged_preset(scenario: &Scenario) -> Option<&'static str> {
    thread_local! {
        static PARSED: Vec<(&'static str, Scenario)> = PRESETS
            .iter()
            .filter_map(|p| Some((p.name, preset(p.name).ok()?)))
            .collect();
    }
    PARSED.with(|all| {
        all.iter()
            .find(|(_, s)| s == scenario)
            .map(|&(name, _)| name)
    })
}

/// The `<iframe>` snippet for a scenario: `?preset=NAME` for an unchanged preset, the whole
/// scenario in the fragment otherwise. With `fit`, a one-line script follows the iframe: it
/// takes the height the embed reports (`{"source":"watermark","type":"height"}` from that
/// iframe only, docs/embedding.md) and sets it, at most 2000 px. The iframe's id is derived
/// from the payload, so two snippets on one page do not collide unless they embed the same
/// thing at the same moment. Only the title is text from the scenario, and it is escaped for
/// an HTML attribute.
pub fn embed_snippet(base: &str, scenario: &Scenario, o: &EmbedOptions) -> String {
    let title = if scenario.title.is_empty() {
        "Watermark".to_string()
    } else {
        format!("Watermark: {}", scenario.title)
    };
    let options = format!(
        "embed=1&t={}&autoplay={}&controls={}",
        o.start_ms,
        u8::from(o.autoplay),
        u8::from(o.controls)
    );
    let src = match unchanged_preset(scenario) {
        Some(name) => format!("{base}?{options}&preset={name}"),
        None => format!("{base}?{options}#s={}", share::encode(scenario)),
    };
    let height = o.height.clamp(200, 2000);
    if !o.fit {
        return format!(
            "<iframe src=\"{src}\" title=\"{}\" width=\"100%\" height=\"{height}\" style=\"border:0\" loading=\"lazy\"></iframe>",
            escape_attr(&title),
        );
    }
    let id = format!("watermark-{:08x}", fnv1a(src.as_bytes()));
    format!(
        "<iframe id=\"{id}\" src=\"{src}\" title=\"{}\" width=\"100%\" height=\"{height}\" style=\"border:0\" loading=\"lazy\"></iframe>\n\
         <script>addEventListener(\"message\",function(e){{var f=document.getElementById(\"{id}\"),m=e.data;if(f&&e.source===f.contentWindow&&m&&m.source===\"watermark\"&&m.type===\"height\"&&m.height>0)f.style.height=Math.min(m.height,2000)+\"px\"}})</script>",
        escape_attr(&title),
    )
}

/// 32-bit FNV-1a, for a short id that is the same for the same text.
fn fnv1a(bytes: &[u8]) -> u32 {
    bytes.iter().fold(0x811c_9dc5u32, |h, &b| {
        (h ^ u32::from(b)).wrapping_mul(0x0100_0193)
    })
}

pub fn escape_attr(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('"', "&quot;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn url_options_are_read_with_defaults() {
        let o = parse_url("", "");
        assert_eq!(
            o,
            UrlOptions {
                embed: false,
                autoplay: false,
                controls: true,
                start_ms: None,
                preset: None,
                link: None
            }
        );
        let o = parse_url("?embed=1&t=12000&autoplay=1&controls=0", "#s=w1.abc");
        assert!(o.embed && o.autoplay && !o.controls);
        assert_eq!(o.start_ms, Some(12_000));
        assert_eq!(o.link.as_deref(), Some("w1.abc"));
        assert_eq!(
            parse_url("?preset=min-isr-3", "").preset.as_deref(),
            Some("min-isr-3")
        );
        assert_eq!(
            parse_url("?t=abc", "").start_ms,
            None,
            "a bad time is ignored"
        );
        assert_eq!(parse_url("", "#w1.xyz").link.as_deref(), Some("w1.xyz"));
    }

    #[test]
    fn a_shared_link_opens_exactly_its_scenario() {
        let s = preset("frozen-follower").unwrap();
        let link = share_link("http://127.0.0.1:8080/", &s, 21_000);
        let (search, hash) = link["http://127.0.0.1:8080/".len()..]
            .split_once('#')
            .unwrap();
        let o = parse_url(search, &format!("#{hash}"));
        assert_eq!(o.start_ms, Some(21_000));
        let opened = choose_opening(&o, None, Scenario::default());
        assert_eq!(opened.scenario, s);
        assert!(opened.notice.is_none());
    }

    #[test]
    fn bad_links_open_the_default_and_say_why() {
        let o = parse_url("", "#s=w1.!!!!");
        let opened = choose_opening(&o, None, Scenario::default());
        assert_eq!(opened.scenario, Scenario::default());
        let notice = opened.notice.unwrap();
        assert!(notice.contains("encoding"), "{notice}");
        assert!(notice.contains("default scenario"));
        let opened = choose_opening(&parse_url("?preset=nope", ""), None, Scenario::default());
        assert!(opened.notice.unwrap().contains("no preset named"));
    }

    #[test]
    fn the_stored_session_is_restored_but_not_in_an_embed() {
        let s = preset("min-isr-3").unwrap();
        let stored = share::encode(&s);
        let opened = choose_opening(&parse_url("", ""), Some(&stored), Scenario::default());
        assert!(opened.restored);
        assert_eq!(opened.scenario, s);
        let embed = choose_opening(
            &parse_url("?embed=1", ""),
            Some(&stored),
            Scenario::default(),
        );
        assert!(!embed.restored);
        let junk = choose_opening(&parse_url("", ""), Some("garbage"), Scenario::default());
        assert_eq!(
            junk.scenario,
            Scenario::default(),
            "a damaged stored session is ignored"
        );
    }

    #[test]
    fn a_restored_session_reopens_at_the_later_of_its_last_action_and_its_saved_time() {
        assert_eq!(restored_time(Some(2_000), Some("7250")), 7_250);
        assert_eq!(
            restored_time(Some(9_000), Some("7250")),
            9_000,
            "a saved time older than the payload loses"
        );
        assert_eq!(restored_time(None, Some(" 300 ")), 300);
        assert_eq!(
            restored_time(Some(2_000), None),
            2_000,
            "sessions saved before the time key"
        );
        for junk in ["", "-5", "1e3", "soon", "18446744073709551616"] {
            assert_eq!(restored_time(Some(2_000), Some(junk)), 2_000, "{junk:?}");
        }
        let too_far = (watermark_engine::scenario::MAX_TIME_MS + 1).to_string();
        assert_eq!(
            restored_time(Some(2_000), Some(&too_far)),
            2_000,
            "beyond the engine's time limit"
        );
    }

    #[test]
    fn embed_snippet_escapes_the_title_and_carries_options() {
        let s = Scenario {
            title: "<script>\"x\" & y".into(),
            ..Scenario::default()
        };
        let snippet = embed_snippet(
            "https://example.org/wm/",
            &s,
            &EmbedOptions {
                autoplay: true,
                start_ms: 500,
                controls: false,
                height: 50,
                fit: false,
            },
        );
        assert!(
            snippet.contains("title=\"Watermark: &lt;script&gt;&quot;x&quot; &amp; y\""),
            "{snippet}"
        );
        assert!(snippet.contains("?embed=1&t=500&autoplay=1&controls=0#s=w1."));
        assert!(snippet.contains("height=\"200\""), "height is clamped");
        assert!(
            !snippet.contains("<script"),
            "a fixed height needs no script"
        );
    }

    #[test]
    fn an_unchanged_preset_is_embedded_by_name_and_a_changed_one_by_value() {
        let o = EmbedOptions {
            autoplay: false,
            start_ms: 0,
            controls: true,
            height: 480,
            fit: true,
        };
        let base = "https://example.org/wm/";
        let s = preset("frozen-follower").unwrap();
        assert_eq!(unchanged_preset(&s), Some("frozen-follower"));
        let snippet = embed_snippet(base, &s, &o);
        assert!(
            snippet.contains("src=\"https://example.org/wm/?embed=1&t=0&autoplay=0&controls=1&preset=frozen-follower\""),
            "{snippet}"
        );
        assert!(!snippet.contains("#s="), "{snippet}");
        // What the snippet's address opens is the preset itself.
        let (search, _) = snippet
            .split("src=\"https://example.org/wm/")
            .nth(1)
            .and_then(|r| r.split_once('"'))
            .unwrap();
        let opened = choose_opening(&parse_url(search, ""), None, Scenario::default());
        assert_eq!(opened.scenario, s);
        // Changed in any way, it is carried whole.
        let mut changed = s.clone();
        changed.timeline.pop();
        assert_eq!(unchanged_preset(&changed), None);
        let snippet = embed_snippet(base, &changed, &o);
        assert!(snippet.contains("&controls=1#s=w1."), "{snippet}");
        assert!(!snippet.contains("preset="));
    }

    #[test]
    fn a_fitting_snippet_carries_a_listener_for_its_own_iframe_only() {
        let o = EmbedOptions {
            autoplay: true,
            start_ms: 1_000,
            controls: false,
            height: 300,
            fit: true,
        };
        let a = embed_snippet("https://h/", &preset("frozen-follower").unwrap(), &o);
        let b = embed_snippet("https://h/", &preset("unclean-election").unwrap(), &o);
        let id = |s: &str| {
            s.split("id=\"")
                .nth(1)
                .and_then(|r| r.split('"').next())
                .unwrap()
                .to_string()
        };
        assert!(id(&a).starts_with("watermark-"));
        assert_ne!(id(&a), id(&b));
        assert_eq!(
            id(&a),
            id(&embed_snippet(
                "https://h/",
                &preset("frozen-follower").unwrap(),
                &o
            ))
        );
        let script = a.split("<script>").nth(1).unwrap();
        assert!(script.contains(&format!("getElementById(\"{}\")", id(&a))));
        assert!(script.contains("e.source===f.contentWindow"));
        assert!(script.contains("m.type===\"height\""));
        assert!(script.contains("Math.min(m.height,2000)"));
        assert!(
            a.contains("height=\"300\""),
            "the height until the first report"
        );
    }
}
