//! Where a session comes from and goes to: the page URL (share links, preset links, embed
//! options), local storage, and files. The parsing is pure and tested natively; the browser
//! glue is small.

use watermark_engine::presets::digest;
use watermark_engine::share;
use watermark_engine::Scenario;

/// A built-in preset as the page knows it before it is opened: what the Scenarios panel
/// shows, and the digest of its scenario (`presets::digest`). The page carries this, not the
/// preset's JSON: it fetches `presets/NAME.json` when the preset is opened (docs/ui.md,
/// "Presets load on demand").
#[derive(Debug, PartialEq, Eq)]
pub struct PresetInfo {
    pub name: &'static str,
    pub title: &'static str,
    pub description: &'static str,
    pub source: &'static str,
    pub digest: u64,
}

// `CATALOG`: every preset, in the engine's order, written by build.rs from the engine's
// presets.
include!(concat!(env!("OUT_DIR"), "/preset_catalog.rs"));

/// The preset called `name`, or what to say when there is none.
pub fn preset_info(name: &str) -> Result<&'static PresetInfo, String> {
    CATALOG.iter().find(|p| p.name == name).ok_or_else(|| {
        // The names written in place, not collected and joined.
        let mut text = format!("no preset named {name:?}; the presets are: ");
        for (i, p) in CATALOG.iter().enumerate() {
            if i > 0 {
                text.push_str(", ");
            }
            text.push_str(p.name);
        }
        text
    })
}

/// Where the built site keeps a preset's file, relative to the page (so the site works
/// from any folder, and in an embed): `presets/NAME.json`, written by the release build
/// (scripts/lib/presets.mjs).
pub fn preset_path(name: &str) -> String {
    format!("presets/{name}.json")
}

/// The scenario of a fetched preset file: it must parse, and be exactly the preset this
/// page was built with (its digest), or the page says what is wrong instead of showing
/// something else under the preset's name.
pub fn read_preset(info: &PresetInfo, text: &str) -> Result<Scenario, String> {
    let scenario = Scenario::from_json(text).map_err(|e| e.to_string())?;
    if digest(&scenario) != info.digest {
        return Err("the file is not the preset this page was built with".into());
    }
    Ok(scenario)
}

/// What the page says when a preset could not be loaded (`why`: the HTTP status, the
/// network error, or what is wrong with the file).
pub fn preset_failed(info: &PresetInfo, why: &str) -> String {
    format!(
        "The preset “{}” ({}) could not be loaded from {}: {why}.",
        info.title,
        info.name,
        preset_path(info.name)
    )
}

/// What the page says while a preset loads.
pub fn preset_loading(info: &PresetInfo) -> String {
    format!("Loading the preset “{}” …", info.title)
}

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
    /// A preset to fetch first (`?preset=NAME`): until it has loaded, the page shows that it
    /// is loading, not `scenario` (`preset_opening` then says what opens).
    pub fetch: Option<&'static PresetInfo>,
}

/// Chooses the scenario to open: a shared link, then a preset (fetched: `fetch`), then the
/// stored session, then the default. A bad link or preset name opens the default and says
/// what was wrong.
pub fn choose_opening(options: &UrlOptions, stored: Option<&str>, default: Scenario) -> Opening {
    if let Some(link) = &options.link {
        return match share::decode(link) {
            Ok(scenario) => Opening {
                scenario,
                notice: None,
                restored: false,
                fetch: None,
            },
            Err(e) => Opening {
                scenario: default,
                notice: Some(format!(
                    "This link could not be opened ({}: {}). Showing the default scenario instead.",
                    e.field, e.message
                )),
                restored: false,
                fetch: None,
            },
        };
    }
    if let Some(name) = &options.preset {
        let (fetch, notice) = match preset_info(name) {
            Ok(info) => (Some(info), None),
            Err(e) => (
                None,
                Some(format!("{e}. Showing the default scenario instead.")),
            ),
        };
        return Opening {
            scenario: default,
            notice,
            restored: false,
            fetch,
        };
    }
    if !options.embed {
        if let Some(Ok(scenario)) = stored.map(share::decode) {
            return Opening {
                scenario,
                notice: Some("Restored your last session. Reset starts over.".into()),
                restored: true,
                fetch: None,
            };
        }
    }
    Opening {
        scenario: default,
        notice: None,
        restored: false,
        fetch: None,
    }
}

/// What opens once the preset `info` was fetched (`fetched`: the file's text, or why there
/// is none): the preset, or the default scenario and a notice that names the preset and
/// says what went wrong.
pub fn preset_opening(
    info: &'static PresetInfo,
    fetched: Result<String, String>,
    default: Scenario,
) -> Opening {
    let (scenario, notice) = match fetched.and_then(|text| read_preset(info, &text)) {
        Ok(scenario) => (scenario, None),
        Err(why) => (
            default,
            Some(format!(
                "{} Showing the default scenario instead.",
                preset_failed(info, &why)
            )),
        ),
    };
    Opening {
        scenario,
        notice,
        restored: false,
        fetch: None,
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
/// Told by the digest of the scenario (`presets::digest`), which the page carries for each
/// preset instead of its JSON; the Share panel asks on every frame while it plays, so the
/// digest is only taken when a preset's title matches.
pub fn unchanged_preset(scenario: &Scenario) -> Option<&'static str> {
    let mut d = None;
    CATALOG
        .iter()
        .find(|p| {
            p.title == scenario.title && *d.get_or_insert_with(|| digest(scenario)) == p.digest
        })
        .map(|p| p.name)
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
    use watermark_engine::presets::{preset, PRESETS};

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
        let info = opened.fetch.expect("the preset is fetched");
        assert_eq!(info.name, "frozen-follower");
        let file = PRESETS.iter().find(|p| p.name == info.name).unwrap().json;
        let opened = preset_opening(info, Ok(file.into()), Scenario::default());
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

    /// The table the page carries (build.rs) is the engine's presets: the same names in the
    /// same order, their words, and the digest of each one's scenario.
    #[test]
    fn the_catalog_is_the_engines_presets() {
        assert_eq!(CATALOG.len(), PRESETS.len());
        for (info, p) in CATALOG.iter().zip(PRESETS) {
            let s = preset(p.name).unwrap();
            assert_eq!(info.name, p.name);
            assert_eq!(
                (info.title, info.description, info.source),
                (s.title.as_str(), s.description.as_str(), s.source.as_str())
            );
            assert_eq!(info.digest, digest(&s), "{}", p.name);
        }
        assert_eq!(
            preset_info("min-isr-3").unwrap().title,
            preset("min-isr-3").unwrap().title
        );
        let e = preset_info("nope").unwrap_err();
        assert!(
            e.starts_with(
                "no preset named \"nope\"; the presets are: acks-walkthrough, fetcher-threads,"
            ),
            "{e}"
        );
    }

    /// `?preset=NAME` opens nothing until the file is fetched (not even a stored session);
    /// the file then opens only if it is exactly the preset, and anything else opens the
    /// default scenario with a notice that names the preset and says what was wrong.
    #[test]
    fn a_preset_link_waits_for_its_file_and_a_bad_file_opens_the_default() {
        let stored = share::encode(&preset("frozen-follower").unwrap());
        let opened = choose_opening(
            &parse_url("?preset=min-isr-3&t=500", ""),
            Some(&stored),
            Scenario::default(),
        );
        let info = opened.fetch.expect("a preset to fetch");
        assert_eq!(info.name, "min-isr-3");
        assert!(!opened.restored && opened.notice.is_none());
        assert_eq!(preset_path(info.name), "presets/min-isr-3.json");
        assert_eq!(
            preset_loading(info),
            "Loading the preset “min.insync.replicas=3 with one broker stopped” …"
        );

        // The site's file (minified) and the readable one are the same scenario.
        let minified = PRESETS.iter().find(|p| p.name == "min-isr-3").unwrap().json;
        let readable = include_str!("../../engine/presets/min-isr-3.json");
        for text in [minified, readable] {
            let opened = preset_opening(info, Ok(text.into()), Scenario::default());
            assert_eq!(opened.scenario, preset("min-isr-3").unwrap());
            assert_eq!(opened.notice, None);
        }

        let failed = |fetched: Result<String, String>| {
            let opened = preset_opening(info, fetched, Scenario::default());
            assert_eq!(opened.scenario, Scenario::default());
            opened.notice.expect("a notice")
        };
        assert_eq!(
            failed(Err("HTTP 404".into())),
            format!("The preset “{}” (min-isr-3) could not be loaded from presets/min-isr-3.json: HTTP 404. Showing the default scenario instead.", info.title)
        );
        let garbage = failed(Ok("<html>not found</html>".into()));
        assert!(
            garbage.contains("(min-isr-3) could not be loaded")
                && garbage.contains("not a valid scenario"),
            "{garbage}"
        );
        let other = PRESETS
            .iter()
            .find(|p| p.name == "frozen-follower")
            .unwrap()
            .json;
        assert!(failed(Ok(other.into()))
            .contains(": the file is not the preset this page was built with."));
    }
}
