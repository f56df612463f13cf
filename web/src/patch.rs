//! Markup the page builds as a string (a table, a lane's label) set by patching what changed.
//!
//! Setting `innerHTML` again replaces every node: the browser parses the markup, styles,
//! lays out and paints all of it, however little changed. Kafka's metrics table (12 brokers)
//! changes every frame while records flow (a fetch purgatory's size, a fetcher's MaxLag),
//! and replacing it was a third of a frame's rendering at 10× (BENCHMARKS.md, "Issue 14's
//! third session"). [`Patched::set`] compares the new markup with the last: when only
//! attribute values and texts differ (the same elements with the same attributes in the same
//! order) it sets just those on the nodes it kept, so that the element's markup then reads
//! exactly as if it had been set whole; otherwise it sets the markup whole.
//!
//! It reads only the markup this crate writes: tags with double-quoted attributes, closing
//! tags written out, texts and values escaped with the five entities of
//! [`crate::session::escape_attr`]. Anything else (another entity, a comment) makes the
//! markup unpatchable and it is set whole, as before.

use leptos::prelude::*;
use wasm_bindgen::JsCast;

/// An effect that keeps the element `el` gives (once it is mounted) showing `markup`,
/// patched ([`Patched::set`]).
pub fn patch_effect(
    el: Box<dyn Fn() -> Option<web_sys::Element>>,
    markup: Box<dyn Fn() -> String>,
) {
    // The state in a RefCell, not the effect's value: an effect's value type is kilobytes
    // of wasm of its own (BENCHMARKS.md, "Shipped size").
    let p = std::cell::RefCell::new(Patched::default());
    Effect::new(move |_| {
        let m = markup();
        if let Some(e) = el() {
            p.borrow_mut().set(&e, m);
        }
    });
}

/// The pieces of a markup string: each element's attributes (in document order of their
/// opening tags), each text, and its shape (the tags with their attributes' names, and where
/// texts are: everything but the values).
#[derive(Debug, Default, PartialEq)]
pub struct Pieces {
    shape: String,
    attrs: Vec<Vec<(String, String)>>,
    texts: Vec<String>,
}

/// The five entities [`crate::session::escape_attr`] writes, decoded; `None` for any other.
fn unescape(s: &str) -> Option<String> {
    // Slices by `split`, `strip_prefix` and `split_at_checked`, which cannot panic: an
    // index slice brings the panic's formatting into the wasm (kilobytes).
    let mut parts = s.split('&');
    let mut out = String::from(parts.next()?);
    for part in parts {
        let (c, rest) = [
            ('&', "amp;"),
            ('<', "lt;"),
            ('>', "gt;"),
            ('"', "quot;"),
            ('\'', "#39;"),
        ]
        .into_iter()
        .find_map(|(c, e)| Some((c, part.strip_prefix(e)?)))?;
        out.push(c);
        out.push_str(rest);
    }
    Some(out)
}

/// Splits markup into [`Pieces`], or `None` for markup it does not read (see the module's
/// note).
pub fn pieces(markup: &str) -> Option<Pieces> {
    let mut p = Pieces::default();
    let mut rest = markup;
    while !rest.is_empty() {
        let Some(tag) = rest.strip_prefix('<') else {
            let (text, after) = rest.split_at_checked(rest.find('<').unwrap_or(rest.len()))?;
            p.texts.push(unescape(text)?);
            p.shape.push('#');
            rest = after;
            continue;
        };
        if let Some(close) = tag.strip_prefix('/') {
            let (name, after) = close.split_once('>')?;
            p.shape.push_str("</");
            p.shape.push_str(name);
            p.shape.push('>');
            rest = after;
            continue;
        }
        let (name, mut a) = tag.split_at_checked(tag.find([' ', '>'])?)?;
        if name.is_empty() || name.starts_with('!') || name.ends_with('/') {
            return None;
        }
        p.shape.push('<');
        p.shape.push_str(name);
        let mut attrs = vec![];
        // Attributes up to the tag's end, a `>` outside quotes (a value may hold one).
        loop {
            a = a.trim_start();
            if let Some(after) = a.strip_prefix('>') {
                p.shape.push('>');
                rest = after;
                break;
            }
            let (key, after) = a.split_at_checked(a.find(['=', ' ', '>'])?)?;
            if key.is_empty() || key == "/" {
                return None;
            }
            p.shape.push(' ');
            p.shape.push_str(key);
            match after.strip_prefix("=\"") {
                // A value: key="value".
                Some(v) => {
                    let (value, after) = v.split_once('"')?;
                    attrs.push((key.to_string(), unescape(value)?));
                    a = after;
                }
                // A boolean attribute: its name alone.
                None => {
                    attrs.push((key.to_string(), String::new()));
                    a = after;
                }
            }
        }
        p.attrs.push(attrs);
    }
    Some(p)
}

/// An element's markup as last set, with the nodes it made (empty when it was set whole
/// and could not be read back, so that the next change sets it whole again).
#[derive(Default)]
pub struct Patched {
    markup: String,
    pieces: Option<Pieces>,
    elements: Vec<web_sys::Element>,
    texts: Vec<web_sys::Text>,
}

impl Patched {
    /// Makes `el`'s content `markup`, patching the nodes it made last time when only
    /// attribute values and texts changed.
    pub fn set(&mut self, el: &web_sys::Element, markup: String) {
        if markup == self.markup {
            return;
        }
        let new = pieces(&markup);
        match (&self.pieces, &new) {
            (Some(old), Some(new))
                if old.shape == new.shape
                    && self.elements.len() == new.attrs.len()
                    && self.texts.len() == new.texts.len() =>
            {
                // The same attributes in the same order (the shape says so): set the values
                // that changed, so that the element's markup reads as if it were set whole.
                for ((e, was), now) in self.elements.iter().zip(&old.attrs).zip(&new.attrs) {
                    for ((k, v), (_, w)) in now.iter().zip(was) {
                        if v != w {
                            let _ = e.set_attribute(k, v);
                        }
                    }
                }
                for ((t, was), now) in self.texts.iter().zip(&old.texts).zip(&new.texts) {
                    if was != now {
                        t.set_data(now);
                    }
                }
            }
            _ => {
                el.set_inner_html(&markup);
                self.elements.clear();
                self.texts.clear();
                if let Some(p) = &new {
                    collect(el, &mut self.elements, &mut self.texts);
                    // The browser made other nodes than the markup says (a parser's fix-up):
                    // nothing to patch next time.
                    if self.elements.len() != p.attrs.len() || self.texts.len() != p.texts.len() {
                        self.elements.clear();
                        self.texts.clear();
                    }
                }
            }
        }
        self.pieces = new;
        self.markup = markup;
    }
}

/// `el`'s descendant elements and texts, in document order.
fn collect(
    el: &web_sys::Node,
    elements: &mut Vec<web_sys::Element>,
    texts: &mut Vec<web_sys::Text>,
) {
    let mut child = el.first_child();
    while let Some(n) = child {
        if let Some(t) = n.dyn_ref::<web_sys::Text>() {
            texts.push(t.clone());
        } else if let Some(e) = n.dyn_ref::<web_sys::Element>() {
            elements.push(e.clone());
            collect(&n, elements, texts);
        }
        child = n.next_sibling();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markup_splits_into_its_shape_attributes_and_texts() {
        let p =
            pieces(r#"<tr class="a b"><td title="x &amp; y">1 &lt; 2</td><td hidden></td></tr>"#)
                .expect("readable");
        assert_eq!(p.shape, "<tr class><td title>#</td><td hidden></td></tr>");
        assert_eq!(
            p.attrs,
            vec![
                vec![("class".to_string(), "a b".to_string())],
                vec![("title".to_string(), "x & y".to_string())],
                vec![("hidden".to_string(), String::new())],
            ]
        );
        assert_eq!(p.texts, vec!["1 < 2".to_string()]);
    }

    #[test]
    fn markup_it_cannot_read_back_is_refused() {
        // Another entity, a comment, a self-closing tag, an unquoted value.
        assert_eq!(
            pieces(r#"<text title="a > b">c</text>"#).map(|p| p.texts),
            Some(vec!["c".to_string()])
        );
        for m in [
            "<p>&nbsp;</p>",
            "<!-- x --><p></p>",
            "<br/>",
            "<br />",
            "<p a=b></p>",
            "<p",
        ] {
            assert_eq!(pieces(m), None, "{m}");
        }
    }

    #[test]
    fn two_markups_that_differ_in_values_only_share_a_shape() {
        let a = pieces(r#"<td class="v">1</td><td>—</td>"#).expect("readable");
        let b = pieces(r#"<td class="w">22</td><td>—</td>"#).expect("readable");
        let c = pieces(r#"<td class="v">1</td>"#).expect("readable");
        // An attribute more is another shape: set whole, its markup reads in markup order.
        let d = pieces(r#"<td class="v" title="t">1</td><td>—</td>"#).expect("readable");
        assert_eq!(a.shape, b.shape);
        assert_ne!(a.shape, c.shape);
        assert_ne!(a.shape, d.shape);
        assert_ne!(a.attrs, b.attrs);
    }
}
