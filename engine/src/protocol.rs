//! Historical protocol modes (issue 15, docs/history.md): the scenario's `protocol` selects
//! the replication rules of a Kafka era, so a run can show the anomaly a KIP fixed.
//!
//! The modes are eras, newest first, and each is cumulative: an older era also lacks every
//! rule a newer KIP added (Kafka 0.10.2 had no leader epochs, and no ELR either). Each
//! rule the engine changes asks one question here (`has_elr`, `has_leader_epoch_truncation`,
//! ...), so every place that differs between eras names the KIP it follows. The controller
//! stays KRaft's in every mode (docs/history.md, "What the modes do not change").

use serde::{Deserialize, Serialize};

use crate::error::{quoted, ScenarioError};

/// The replication protocol of a Kafka era.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Protocol {
    /// Kafka 4.x: every rule the engine models (the default, left out of the JSON).
    #[default]
    Kafka4,
    /// Kafka 3.x, before KIP-966 (4.0): no eligible leader replicas, as
    /// `eligible.leader.replicas.version=0`.
    NoElr,
    /// Kafka 3.0 to 3.4 with KRaft, before KIP-903 (3.5): a follower's fetch carries no
    /// broker epoch, so an AlterPartition may add a replica to the ISR on the fetch state of
    /// its previous process (and no ELR either).
    PreKip903,
    /// Kafka 2.0, before KIP-320 (2.1): a follower's fetch carries no current leader epoch,
    /// so a replica leading at another epoch serves it, and a follower looks for where its
    /// log diverges only on becoming follower (OffsetsForLeaderEpoch with KIP-279's answer).
    PreKip320,
    /// Kafka 0.11 to 1.1, before KIP-279 (2.0): a new follower asks the leader once where
    /// its latest epoch ends, gets an offset without an epoch, and truncates to it.
    Kip101WithoutKip279,
    /// Kafka 0.10.2 and earlier, before KIP-101 (0.11): a replica that becomes follower
    /// truncates to its own high watermark and fetches without leader epochs.
    PreKip101,
}

/// Every mode, in the order the docs list them, with its name in the scenario file.
pub const PROTOCOLS: &[(Protocol, &str)] = &[
    (Protocol::Kafka4, "kafka-4"),
    (Protocol::NoElr, "no-elr"),
    (Protocol::PreKip903, "pre-kip-903"),
    (Protocol::PreKip320, "pre-kip-320"),
    (Protocol::Kip101WithoutKip279, "kip-101-without-kip-279"),
    (Protocol::PreKip101, "pre-kip-101"),
];

impl Protocol {
    /// The mode's name in a scenario file (`"protocol": "pre-kip-101"`).
    pub fn name(self) -> &'static str {
        match self {
            Protocol::Kafka4 => "kafka-4",
            Protocol::NoElr => "no-elr",
            Protocol::PreKip903 => "pre-kip-903",
            Protocol::PreKip320 => "pre-kip-320",
            Protocol::Kip101WithoutKip279 => "kip-101-without-kip-279",
            Protocol::PreKip101 => "pre-kip-101",
        }
    }

    /// The mode a scenario names; an unknown name is refused with the field and the names.
    pub fn parse(field: &str, name: &str) -> Result<Protocol, ScenarioError> {
        for &(p, n) in PROTOCOLS {
            if n == name {
                return Ok(p);
            }
        }
        let mut text = format!("unknown protocol {}; the protocols are: ", quoted(name));
        for (i, (_, n)) in PROTOCOLS.iter().enumerate() {
            if i > 0 {
                text.push_str(", ");
            }
            text.push_str(n);
        }
        Err(ScenarioError::new(field, text))
    }

    /// Whose rules the mode runs, in words.
    pub fn era(self) -> &'static str {
        match self {
            Protocol::Kafka4 => "Kafka 4.x replication",
            Protocol::NoElr => {
                "Kafka 3.x replication, without eligible leader replicas (as eligible.leader.replicas.version=0)"
            }
            Protocol::PreKip903 => {
                "Kafka 3.4 replication with KRaft: a follower's fetch carries no broker epoch, so a restarted broker can rejoin the ISR on its previous process's fetch (and no eligible leader replicas)"
            }
            Protocol::PreKip320 => {
                "Kafka 2.0 replication: a follower's fetch carries no current leader epoch, so a replica leading at another epoch serves it; a follower looks for divergence only on becoming follower"
            }
            Protocol::Kip101WithoutKip279 => {
                "Kafka 1.1 replication: a new follower asks once where its latest leader epoch ends and truncates to the offset it gets, without an epoch"
            }
            Protocol::PreKip101 => {
                "Kafka 0.10.2 replication: a new follower truncates to its own high watermark and fetches without leader epochs"
            }
        }
    }

    /// The KIP that ended the era, its release and its page.
    pub fn fixed_by(self) -> &'static str {
        match self {
            Protocol::Kafka4 => "every rule the engine models",
            Protocol::NoElr => {
                "KIP-966 added them in Kafka 4.0: https://cwiki.apache.org/confluence/display/KAFKA/KIP-966%3A+Eligible+Leader+Replicas"
            }
            Protocol::PreKip903 => {
                "KIP-903 put the broker epoch in fetches and AlterPartition in Kafka 3.5: https://cwiki.apache.org/confluence/display/KAFKA/KIP-903%3A+Replicas+with+stale+broker+epoch+should+not+be+allowed+to+join+the+ISR"
            }
            Protocol::PreKip320 => {
                "KIP-320 added the current leader epoch to fetches (FENCED_LEADER_EPOCH, UNKNOWN_LEADER_EPOCH) in Kafka 2.1: https://cwiki.apache.org/confluence/display/KAFKA/KIP-320%3A+Allow+fetchers+to+detect+and+handle+log+truncation"
            }
            Protocol::Kip101WithoutKip279 => {
                "KIP-279 added the epoch to the answer in Kafka 2.0: https://cwiki.apache.org/confluence/display/KAFKA/KIP-279%3A+Fix+log+divergence+between+leader+and+follower+after+fast+leader+fail+over"
            }
            Protocol::PreKip101 => {
                "KIP-101 replaced it with leader-epoch truncation in Kafka 0.11.0: https://cwiki.apache.org/confluence/display/KAFKA/KIP-101+-+Alter+Replication+Protocol+to+use+Leader+Epoch+rather+than+High+Watermark+for+Truncation"
            }
        }
    }

    pub fn is_default(&self) -> bool {
        *self == Protocol::Kafka4
    }

    /// KIP-966 (Kafka 4.0): eligible leader replicas, the unclean-shutdown registration
    /// check, and the last-known-leader recovery slot. Before it, Kafka 3.x's controller
    /// elected only from the ISR (or uncleanly).
    pub fn has_elr(self) -> bool {
        self == Protocol::Kafka4
    }

    /// KIP-101 (Kafka 0.11): a follower finds where its log diverges from the leader's by
    /// leader epoch (OffsetsForLeaderEpoch, and since KIP-279/KIP-595 the fetch's
    /// lastFetchedEpoch), instead of truncating to its own high watermark.
    pub fn has_leader_epoch_truncation(self) -> bool {
        self != Protocol::PreKip101
    }

    /// KIP-279 (Kafka 2.0): the leader's answer names the epoch its offset ends, and the
    /// follower truncates to where both logs agree, asking again until they do. Before it
    /// (`kip-101-without-kip-279`) OffsetsForLeaderEpoch v0 answered an offset only, once,
    /// when the replica became follower (ReplicaFetcherThread.maybeTruncate at 1.1.0).
    pub fn has_epoch_in_truncation_answer(self) -> bool {
        matches!(
            self,
            Protocol::Kafka4 | Protocol::NoElr | Protocol::PreKip903 | Protocol::PreKip320
        )
    }

    /// Every fetch of a follower carries the epoch of its last fetched record, and the leader
    /// answers a divergence in the fetch response (FetchRequest v12's LastFetchedEpoch,
    /// KIP-595; the replica fetcher's since KAFKA-10554, 2.7). Before it (`pre-kip-320` and
    /// older) a follower asked where its log diverges only in its truncating state, on
    /// becoming follower (OffsetsForLeaderEpoch: AbstractFetcherThread.maybeTruncate at
    /// 2.0.0), then fetched by offset alone.
    pub fn has_divergence_check_in_fetch(self) -> bool {
        matches!(
            self,
            Protocol::Kafka4 | Protocol::NoElr | Protocol::PreKip903
        )
    }

    /// KIP-320 (Kafka 2.1): a fetch carries the follower's current leader epoch, and a
    /// replica answers FENCED_LEADER_EPOCH or UNKNOWN_LEADER_EPOCH when it differs.
    pub fn has_current_leader_epoch_in_fetch(self) -> bool {
        matches!(
            self,
            Protocol::Kafka4 | Protocol::NoElr | Protocol::PreKip903
        )
    }

    /// KIP-903 (Kafka 3.5): a follower's fetch carries its broker epoch, and a leader
    /// ignores the fetch state of a replica whose epoch is older than the registered one.
    pub fn has_broker_epoch_in_fetch(self) -> bool {
        matches!(self, Protocol::Kafka4 | Protocol::NoElr)
    }

    /// KIP-966 (Kafka 3.8): the DescribeTopicPartitions API, whose answer carries each
    /// partition's ELR and last known ELR. A `kafka-topics.sh --describe` of a cluster
    /// without it falls back to a Metadata request
    /// (KafkaAdminClient.generateDescribeTopicsCallWithDescribeTopicPartitionsApi's
    /// handleUnsupportedVersionException), whose TopicPartitionInfo has no ELR, and prints
    /// `Elr: N/A` and `LastKnownElr: N/A` (TopicCommand.PartitionDescription.printDescription).
    /// `no-elr` answers it with empty lists, as Kafka 4.0 does with
    /// `eligible.leader.replicas.version=0`; the eras before 3.8 do not.
    pub fn has_describe_topic_partitions(self) -> bool {
        matches!(self, Protocol::Kafka4 | Protocol::NoElr)
    }

    /// KIP-380 (Kafka 2.2, broker epochs in the ZooKeeper controller) and KRaft's
    /// registrations: the controller tells a restarted broker from the process before it.
    /// Before it, a broker that crashed and came back before the controller acted kept its
    /// place in the ISR (KAFKA-1120: the controller's BrokerChange listener compared broker
    /// id sets and could miss a bounce).
    pub fn detects_broker_bounce(self) -> bool {
        matches!(
            self,
            Protocol::Kafka4 | Protocol::NoElr | Protocol::PreKip903
        )
    }
}

impl Serialize for Protocol {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl<'de> Deserialize<'de> for Protocol {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Protocol, D::Error> {
        let name = String::deserialize(d)?;
        Protocol::parse("protocol", &name).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_an_unknown_one_names_the_field_and_the_modes() {
        for &(p, n) in PROTOCOLS {
            assert_eq!(p.name(), n);
            assert_eq!(Protocol::parse("protocol", n).unwrap(), p);
        }
        let e = Protocol::parse("protocol", "kafka-3").unwrap_err();
        assert_eq!(e.field, "protocol");
        assert_eq!(
            e.message,
            "unknown protocol \"kafka-3\"; the protocols are: kafka-4, no-elr, pre-kip-903, pre-kip-320, kip-101-without-kip-279, pre-kip-101"
        );
    }

    #[test]
    fn eras_are_cumulative() {
        assert!(Protocol::Kafka4.has_elr() && Protocol::Kafka4.has_leader_epoch_truncation());
        assert!(!Protocol::NoElr.has_elr() && Protocol::NoElr.has_leader_epoch_truncation());
        let old = Protocol::PreKip101;
        assert!(!old.has_elr());
        assert!(!old.has_leader_epoch_truncation());
        assert!(!old.has_current_leader_epoch_in_fetch());
        assert!(!old.has_broker_epoch_in_fetch());
        assert!(!old.detects_broker_bounce());
        let mid = Protocol::Kip101WithoutKip279;
        assert!(mid.has_leader_epoch_truncation() && !mid.has_epoch_in_truncation_answer());
        assert!(!mid.has_elr() && !mid.has_current_leader_epoch_in_fetch());
        assert!(!mid.has_broker_epoch_in_fetch() && !mid.detects_broker_bounce());
        assert!(Protocol::NoElr.has_epoch_in_truncation_answer());
        // Kafka 3.4 lacks KIP-903 and KIP-966 only.
        let p903 = Protocol::PreKip903;
        assert!(!p903.has_broker_epoch_in_fetch() && !p903.has_elr());
        assert!(p903.has_leader_epoch_truncation() && p903.has_epoch_in_truncation_answer());
        assert!(p903.has_current_leader_epoch_in_fetch() && p903.detects_broker_bounce());
        assert!(p903.has_divergence_check_in_fetch());
        // Kafka 2.0 has KIP-279's answer, and none of KIP-320, KIP-380, the fetch's
        // divergence check, KIP-903 or KIP-966.
        let p320 = Protocol::PreKip320;
        assert!(p320.has_leader_epoch_truncation() && p320.has_epoch_in_truncation_answer());
        assert!(!p320.has_current_leader_epoch_in_fetch() && !p320.has_divergence_check_in_fetch());
        assert!(!p320.detects_broker_bounce() && !p320.has_broker_epoch_in_fetch());
        assert!(!p320.has_elr());
        assert!(!mid.has_divergence_check_in_fetch() && !old.has_divergence_check_in_fetch());
    }
}
