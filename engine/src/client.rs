//! Clients: a producer (acks, retries, retry.backoff.ms, request.timeout.ms,
//! delivery.timeout.ms with Kafka's retriable errors) and a consumer that reads from the
//! leader below the HW, keeps a position, and notices when an unclean election rewrote what
//! it had read.
//!
//! Simplification (said in the UI): clients always know the controller's current leader, as
//! if their metadata were refreshed instantly; producer idempotence is not modelled, so a
//! retried batch that was already appended is written again.

use std::collections::{BTreeMap, VecDeque};

use serde::{Deserialize, Serialize};

use crate::network::Payload;
use crate::scenario::ProduceSpec;
use crate::sim::{ClientTimer, Event, Sim};
use crate::trace::{Level, TraceKind};
use crate::types::{Acks, BrokerId, ErrorCode, Node, TimeMs};

/// The node of the producer and the consumer.
pub const PRODUCER: Node = Node::Client(1);
pub const CONSUMER: Node = Node::Client(2);

/// Extra time the client waits beyond request.timeout.ms before giving up on its own, so the
/// broker's REQUEST_TIMED_OUT (from the purgatory) normally arrives first.
const CLIENT_TIMEOUT_SLACK_MS: u64 = 50;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Attempt {
    pub values: Vec<String>,
    pub created_ms: TimeMs,
    pub retries_done: u32,
    pub request_id: Option<u64>,
    pub target: Option<BrokerId>,
}

/// One produce action: its batches, sent one after another.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProduceJob {
    pub acks: Acks,
    pub retries: u32,
    pub to: Option<BrokerId>,
    pub pending: VecDeque<Vec<String>>,
    pub current: Option<Attempt>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Producer {
    pub jobs: BTreeMap<u64, ProduceJob>,
    pub next_job: u64,
    /// request id → job id
    pub requests: BTreeMap<u64, u64>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Consumer {
    /// The next offset to read; None until the first read.
    pub position: Option<u64>,
    /// What the consumer read: offset → (leader epoch, value).
    pub seen: BTreeMap<u64, (i32, String)>,
    /// Offsets whose rewrite has been reported already.
    pub reported: std::collections::BTreeSet<u64>,
    pub requests: BTreeMap<u64, u32>,
}

/// Most records the consumer remembers.
pub const MAX_SEEN: usize = 100_000;

impl Sim {
    pub(crate) fn client_produce(&mut self, spec: &ProduceSpec) {
        let values = spec.values();
        let pending: VecDeque<Vec<String>> = if spec.one_by_one {
            values.into_iter().map(|v| vec![v]).collect()
        } else {
            VecDeque::from([values])
        };
        let id = self.producer.next_job;
        self.producer.next_job += 1;
        self.producer.jobs.insert(
            id,
            ProduceJob {
                acks: spec.acks.0,
                retries: spec.retries.unwrap_or(self.config.retries),
                to: spec.to,
                pending,
                current: None,
            },
        );
        self.schedule_at(
            self.now,
            Event::Client(ClientTimer::ProducerSend { job: id }),
        );
    }

    pub(crate) fn client_timer(&mut self, t: ClientTimer) {
        match t {
            ClientTimer::ProducerSend { job } => self.producer_send(job),
            ClientTimer::ProducerRequestTimeout { job, request_id } => {
                let current = self
                    .producer
                    .jobs
                    .get(&job)
                    .and_then(|j| j.current.as_ref())
                    .and_then(|a| a.request_id);
                if current == Some(request_id) {
                    self.producer_result(job, request_id, ErrorCode::REQUEST_TIMED_OUT, None, None);
                }
            }
        }
    }

    fn producer_send(&mut self, job_id: u64) {
        let now = self.now;
        let leader = self.controller.partition.leader;
        let delivery_timeout = self.config.delivery_timeout_ms;
        let Some(job) = self.producer.jobs.get_mut(&job_id) else {
            return;
        };
        if job.current.is_none() {
            let Some(values) = job.pending.pop_front() else {
                self.producer.jobs.remove(&job_id);
                return;
            };
            job.current = Some(Attempt {
                values,
                created_ms: now,
                retries_done: 0,
                request_id: None,
                target: None,
            });
        }
        let acks = job.acks;
        let to = job.to;
        let Some(attempt) = job.current.as_mut() else {
            return;
        };
        if attempt.request_id.is_some() {
            return;
        }
        if now >= attempt.created_ms + delivery_timeout {
            let n = attempt.values.len();
            let text = format!(
                "acks={acks} -> TimeoutException: Expiring {n} record(s) for {}: {} ms has passed since batch creation",
                self.tp,
                now - attempt.created_ms
            );
            self.metrics.produce_errors += 1;
            job.current = None;
            self.trace(TraceKind::Produce, Level::Error, None, text);
            self.schedule_at(
                now,
                Event::Client(ClientTimer::ProducerSend { job: job_id }),
            );
            return;
        }
        let Some(target) = to.or(leader) else {
            // No leader in the metadata: the batch waits (not a retry) and metadata is
            // refreshed after retry.backoff.ms.
            let backoff = self.config.retry_backoff_ms;
            self.schedule_at(
                now + backoff,
                Event::Client(ClientTimer::ProducerSend { job: job_id }),
            );
            return;
        };
        let request_id = self.next_request_id;
        self.next_request_id += 1;
        attempt.request_id = Some(request_id);
        attempt.target = Some(target);
        let values = attempt.values.clone();
        self.producer.requests.insert(request_id, job_id);
        let timeout_ms = self.config.request_timeout_ms;
        self.send(
            PRODUCER,
            Node::Broker(target),
            Payload::Produce {
                request_id,
                acks,
                values,
                timeout_ms,
                producer: crate::log::BatchProducer::NONE,
            },
        );
        if acks == Acks::Zero {
            // acks=0: the producer does not wait for any response.
            self.producer_result(job_id, request_id, ErrorCode::NONE, None, None);
        } else {
            let latency = self.config.network_latency_ms * 2;
            self.schedule_at(
                now + timeout_ms + latency + CLIENT_TIMEOUT_SLACK_MS,
                Event::Client(ClientTimer::ProducerRequestTimeout {
                    job: job_id,
                    request_id,
                }),
            );
        }
    }

    fn producer_result(
        &mut self,
        job_id: u64,
        request_id: u64,
        error: ErrorCode,
        base: Option<u64>,
        last: Option<u64>,
    ) {
        let now = self.now;
        self.producer.requests.remove(&request_id);
        let backoff = self.config.retry_backoff_ms;
        let delivery_timeout = self.config.delivery_timeout_ms;
        let tp = self.tp.clone();
        let Some(job) = self.producer.jobs.get_mut(&job_id) else {
            return;
        };
        let acks = job.acks;
        let retries = job.retries;
        let Some(attempt) = job.current.as_mut() else {
            return;
        };
        if attempt.request_id != Some(request_id) {
            return;
        }
        attempt.request_id = None;
        let waited = now - attempt.created_ms;
        if error == ErrorCode::NONE {
            let text = match (acks, base, last) {
                (Acks::Zero, _, _) => format!(
                    "acks=0 -> sent ({} record(s); no response, so no offset)",
                    attempt.values.len()
                ),
                (_, Some(b), Some(l)) if b == l => format!("acks={acks} -> ok, offset={b}"),
                (_, Some(b), Some(l)) => format!("acks={acks} -> ok, offsets={b}..{l}"),
                _ => format!("acks={acks} -> ok"),
            };
            let text = if acks == Acks::All {
                format!("{text} (waited {waited} ms)")
            } else {
                text
            };
            job.current = None;
            self.metrics.produce_ok += 1;
            if acks == Acks::All {
                self.metrics.acks_all_latencies_ms.push(waited);
                if self.metrics.acks_all_latencies_ms.len() > 1000 {
                    self.metrics.acks_all_latencies_ms.remove(0);
                }
            }
            self.trace(TraceKind::Produce, Level::Info, None, text);
        } else if error.is_retriable()
            && attempt.retries_done < retries
            && now + backoff >= attempt.created_ms + delivery_timeout
        {
            // Retries left, but delivery.timeout.ms runs out first: the batch expires.
            let text = format!(
                "acks={acks} -> TimeoutException: Expiring {} record(s) for {tp}: {} ms has passed since batch creation (last error {error})",
                attempt.values.len(),
                now + backoff - attempt.created_ms
            );
            job.current = None;
            self.metrics.produce_errors += 1;
            self.trace(TraceKind::Produce, Level::Error, None, text);
        } else if error.is_retriable() && attempt.retries_done < retries {
            attempt.retries_done += 1;
            let left = retries - attempt.retries_done;
            let text = format!(
                "[Producer clientId=producer-1] Got error produce response on topic-partition {tp}, retrying ({left} attempts left). Error: {error}"
            );
            self.trace(TraceKind::Produce, Level::Warn, None, text);
            self.schedule_at(
                now + backoff,
                Event::Client(ClientTimer::ProducerSend { job: job_id }),
            );
            return;
        } else {
            let text = match (error, base) {
                (ErrorCode::NOT_ENOUGH_REPLICAS_AFTER_APPEND, Some(b)) => {
                    format!("acks={acks} -> NOT_ENOUGH_REPLICAS_AFTER_APPEND (written at offset {b}, but the ISR shrank below min.insync.replicas)")
                }
                _ => format!("acks={acks} -> {error}"),
            };
            job.current = None;
            self.metrics.produce_errors += 1;
            self.trace(TraceKind::Produce, Level::Error, None, text);
        }
        self.schedule_at(
            now,
            Event::Client(ClientTimer::ProducerSend { job: job_id }),
        );
    }

    pub(crate) fn client_consume(&mut self, max_records: Option<u32>, from_beginning: bool) {
        if from_beginning {
            self.consumer.position = None;
        }
        let Some(leader) = self.controller.partition.leader else {
            self.trace(
                TraceKind::Consume,
                Level::Warn,
                None,
                format!("consumer: LEADER_NOT_AVAILABLE for {}", self.tp),
            );
            return;
        };
        let offset = self
            .consumer
            .position
            .unwrap_or_else(|| self.brokers[&leader].log.log_start_offset);
        let request_id = self.next_request_id;
        self.next_request_id += 1;
        let max = max_records.unwrap_or(500);
        self.consumer.requests.insert(request_id, max);
        self.send(
            CONSUMER,
            Node::Broker(leader),
            Payload::ConsumerFetch {
                request_id,
                offset,
                max_records: max,
            },
        );
    }

    pub(crate) fn client_receive(&mut self, payload: Payload) {
        match payload {
            Payload::ProduceResponse {
                request_id,
                error,
                base_offset,
                last_offset,
            } => {
                if let Some(&job) = self.producer.requests.get(&request_id) {
                    self.producer_result(job, request_id, error, base_offset, last_offset);
                }
            }
            Payload::ConsumerFetchResponse {
                request_id,
                error,
                records,
                high_watermark,
                log_end_offset,
                ..
            } => {
                if self.consumer.requests.remove(&request_id).is_none() {
                    return;
                }
                self.consumer_response(error, records, high_watermark, log_end_offset);
            }
            _ => {}
        }
    }

    /// The engine sees every log: it tells the consumer's reader when offsets it already read
    /// now hold other records on the leader (after an unclean election), even though a real
    /// consumer would not notice until it read them again.
    fn consumer_check_rewritten(&mut self) {
        let Some(leader) = self.controller.partition.leader else {
            return;
        };
        let log = &self.brokers[&leader].log;
        let mut rewritten = vec![];
        for (&offset, (epoch, value)) in &self.consumer.seen {
            if self.consumer.reported.contains(&offset) {
                continue;
            }
            if let Some(r) = log.record_at(offset) {
                if r.epoch != *epoch || r.value != *value {
                    rewritten.push((offset, r.value.clone(), value.clone()));
                }
            }
        }
        if rewritten.is_empty() {
            return;
        }
        for (o, _, _) in &rewritten {
            self.consumer.reported.insert(*o);
        }
        let (first, last) = (rewritten[0].0, rewritten[rewritten.len() - 1].0);
        let now: Vec<&str> = rewritten.iter().map(|(_, n, _)| n.as_str()).collect();
        let before: Vec<&str> = rewritten.iter().map(|(_, _, b)| b.as_str()).collect();
        self.trace(
            TraceKind::Loss,
            Level::Warn,
            None,
            format!(
                "consumer: offsets {first}..{last} now hold different records ({}) than it read there ({})",
                now.join(" "),
                before.join(" ")
            ),
        );
    }

    fn consumer_response(
        &mut self,
        error: ErrorCode,
        records: Vec<crate::log::Record>,
        hw: u64,
        leo: u64,
    ) {
        self.consumer_check_rewritten();
        let position = self.consumer.position.unwrap_or(0);
        match error {
            ErrorCode::NONE => {
                for r in &records {
                    if self.consumer.seen.len() < MAX_SEEN
                        || self.consumer.seen.contains_key(&r.offset)
                    {
                        self.consumer
                            .seen
                            .insert(r.offset, (r.epoch, r.value.clone()));
                    }
                }
                if let Some(last) = records.last() {
                    let values: Vec<&str> = records.iter().map(|r| r.value.as_str()).collect();
                    let first = records[0].offset;
                    self.consumer.position = Some(last.offset + 1);
                    self.trace(
                        TraceKind::Consume,
                        Level::Info,
                        None,
                        format!(
                            "consumer: {} (offsets {first}..{}, position {})",
                            values.join(" "),
                            last.offset,
                            last.offset + 1
                        ),
                    );
                } else {
                    self.consumer.position = Some(position);
                    self.trace(
                        TraceKind::Consume,
                        Level::Info,
                        None,
                        format!("consumer: no records below the high watermark {hw} (position {position})"),
                    );
                }
            }
            ErrorCode::OFFSET_OUT_OF_RANGE => {
                let gone: Vec<u64> = self.consumer.seen.range(leo..).map(|(o, _)| *o).collect();
                let mut text = format!(
                    "consumer: OFFSET_OUT_OF_RANGE: position {position} is past the log end offset {leo}; auto.offset.reset=latest moves it to {leo}"
                );
                if let (Some(a), Some(z)) = (gone.first(), gone.last()) {
                    text.push_str(&format!(". Offsets {a}..{z} that it read no longer exist"));
                }
                self.consumer.position = Some(leo);
                self.trace(TraceKind::Consume, Level::Warn, None, text);
            }
            other => self.trace(
                TraceKind::Consume,
                Level::Warn,
                None,
                format!("consumer: {other}"),
            ),
        }
    }
}
