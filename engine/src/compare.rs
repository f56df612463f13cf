//! SHIM (lead's branch only; replaced by the `compare` branch at merge).
use crate::json::Value;
use crate::scenario::{AcksOrDefault, Action, Scenario};
use crate::types::{Acks, BrokerId};
use crate::{Protocol, ScenarioError, Sim};

pub const MAX_VARIANTS: usize = 2;

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Variant {
    pub label: String,
    pub protocol: Option<Protocol>,
    pub config: Vec<(String, Value)>,
    pub acks: Option<Acks>,
}

impl Variant {
    pub fn title(&self) -> String {
        if !self.label.is_empty() {
            return self.label.clone();
        }
        let mut parts = vec![];
        if let Some(a) = self.acks {
            parts.push(format!("acks={}", match a { Acks::Zero => "0", Acks::One => "1", Acks::All => "all" }));
        }
        for (n, v) in &self.config {
            parts.push(format!("{n}={}", crate::json::value_text(v)));
        }
        if let Some(p) = self.protocol {
            parts.push(format!("protocol {}", p.name()));
        }
        parts.join(", ")
    }
    pub fn adapt(&self, action: &Action) -> Option<Action> {
        match action {
            Action::Produce(p) => {
                let mut p = p.clone();
                if let Some(a) = self.acks {
                    p.acks = AcksOrDefault(a);
                }
                Some(Action::Produce(p))
            }
            Action::SetConfig { name, .. } if self.config.iter().any(|(n, _)| n == name) => None,
            a => Some(a.clone()),
        }
    }
}

impl Scenario {
    pub fn variant(&self, i: usize) -> Result<Scenario, ScenarioError> {
        let v = self.compare.get(i).ok_or_else(|| ScenarioError::new("compare", "no such variant"))?;
        let mut s = self.clone();
        s.compare.clear();
        s.expect.clear();
        if let Some(p) = v.protocol {
            s.protocol = p;
        }
        for (n, val) in &v.config {
            s.config.set(n, val).map_err(|e| ScenarioError::new("compare", e.to_string()))?;
        }
        let timeline = std::mem::take(&mut s.timeline);
        s.timeline = timeline
            .into_iter()
            .filter_map(|mut t| v.adapt(&t.action).map(|a| { t.action = a; t }))
            .collect();
        s.validate()?;
        Ok(s)
    }
}

pub struct Difference {
    pub what: String,
    pub broker: Option<BrokerId>,
    pub top: String,
    pub other: String,
}

pub fn differences(top: &Sim, other: &Sim) -> Vec<Difference> {
    let (a, b) = (top.snapshot_tail(8), other.snapshot_tail(8));
    let mut out = vec![];
    if a.describe != b.describe {
        out.push(Difference { what: "describe".into(), broker: None, top: a.describe.clone(), other: b.describe.clone() });
    }
    out
}

pub fn config_names(v: &Variant) -> Vec<String> {
    v.config.iter().map(|(n, _)| n.clone()).collect()
}
pub fn config_texts(v: &Variant) -> Vec<(String, String)> {
    v.config.iter().map(|(n, x)| (n.clone(), match x { Value::String(t) => t.clone(), o => crate::json::value_text(o) })).collect()
}
pub fn set_config(v: &mut Variant, name: &str, value: &str) -> Result<(), crate::ConfigError> {
    let mut c = crate::Config::default();
    let val = crate::json::Value::String(value.to_string());
    c.set(name, &val)?;
    v.config.push((name.to_string(), val));
    Ok(())
}
