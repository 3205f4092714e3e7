//! Building a generator: its options, its clock, and its node lease (given, or resolved from
//! the options and the environment).

use super::identity::{check_node_may_change, Identity};
use super::sync::AtomicU64;
use super::ticks::Ticks;
use super::{random_u64, Generator, OwnWord, StateWord};
use crate::clock::{Clock, SystemClock};
use crate::codec::constant_bits;
use crate::error::Result;
use crate::fork;
use crate::layout::Layout;
use crate::lease::node::{Fence, NodeLease};
use crate::options::{Options, SequencePolicy};

impl Generator<SystemClock> {
    pub fn builder() -> Builder<SystemClock> {
        Builder {
            options: Options::default(),
            clock: SystemClock,
            lease: None,
        }
    }

    /// A generator configured as docs/spec.md#generator-options says: explicit options first,
    /// then the environment (`FLAKERY_*`).
    pub fn new(options: Options) -> Result<Self> {
        Builder {
            options,
            clock: SystemClock,
            lease: None,
        }
        .build()
    }
}

/// Builds a generator; every option of docs/spec.md#generator-options has a method.
pub struct Builder<C: Clock> {
    options: Options,
    clock: C,
    lease: Option<Box<dyn NodeLease>>,
}

impl<C: Clock> Builder<C> {
    pub fn layout(mut self, layout: Layout) -> Self {
        self.options.layout = Some(layout);
        self
    }

    /// Parses and sets the layout.
    pub fn layout_spec(mut self, spec: &str) -> Result<Self> {
        self.options.layout = Some(Layout::parse(spec)?);
        Ok(self)
    }

    pub fn datacenter_id(mut self, id: u64) -> Self {
        self.options.datacenter_id = Some(id);
        self
    }

    pub fn worker_id(mut self, id: u64) -> Self {
        self.options.worker_id = Some(id);
        self
    }

    pub fn sequence_policy(mut self, policy: SequencePolicy) -> Self {
        self.options.sequence_policy = policy;
        self
    }

    pub fn max_borrow_ms(mut self, ms: u64) -> Self {
        self.options.max_borrow_ms = ms;
        self
    }

    pub fn backwards_tolerance_ms(mut self, ms: u64) -> Self {
        self.options.backwards_tolerance_ms = ms;
        self
    }

    pub fn random_sequence_start(mut self, on: bool) -> Self {
        self.options.random_sequence_start = on;
        self
    }

    /// The value of a constant field (Vesta's `version`, `type`, `method`).
    pub fn field(mut self, name: &str, value: u64) -> Self {
        self.options.fields.push((name.to_string(), value));
        self
    }

    pub fn options(mut self, options: Options) -> Self {
        self.options = options;
        self
    }

    /// Uses this node identity instead of resolving one from the options and environment.
    pub fn lease(mut self, lease: Box<dyn NodeLease>) -> Self {
        self.lease = Some(lease);
        self
    }

    pub fn clock<K: Clock>(self, clock: K) -> Builder<K> {
        Builder {
            options: self.options,
            clock,
            lease: self.lease,
        }
    }

    pub fn build(self) -> Result<Generator<C>> {
        self.build_on(OwnWord::default())
    }

    /// Builds a generator whose state is `word`: its own (`build`), or one shared with the
    /// generators of other processes (`SharedWord`).
    pub fn build_on<W: StateWord>(self, word: W) -> Result<Generator<C, W>> {
        let Builder {
            options,
            clock,
            lease,
        } = self;
        let layout = options.resolved_layout()?;
        layout.check_generatable()?;
        let constant_bits = constant_bits(&layout, &options.fields)?;
        let lease = match lease {
            Some(lease) => lease,
            None => crate::lease::resolve::resolve_node(&options, &layout)?,
        };
        check_node_may_change(&layout, lease.source())?;
        fork::install();
        let unit = layout.unit().millis() as u64;
        let ticks_up = |ms: u64| ms.div_ceil(unit);
        let max_borrow_ticks = match options.sequence_policy {
            SequencePolicy::Wait => 0,
            SequencePolicy::Borrow => ticks_up(options.max_borrow_ms),
        };
        let tolerance_ticks = ticks_up(options.backwards_tolerance_ms);
        let ahead_allowance = tolerance_ticks.saturating_add(max_borrow_ticks);
        let mut generator = Generator {
            state: word,
            node_bits: AtomicU64::new(constant_bits),
            limit: Fence::for_generator(),
            fork_generation: AtomicU64::new(fork::generation()),
            ticks: Ticks::new(&layout, ahead_allowance),
            constant_bits,
            policy: options.sequence_policy,
            max_borrow_ticks,
            tolerance_ticks,
            ahead_allowance,
            random_key: if options.random_sequence_start {
                random_u64() | 1
            } else {
                0
            },
            layout,
            clock,
            identity: Identity::new(lease),
            sequence_waits: AtomicU64::new(0),
            ticks_borrowed: AtomicU64::new(0),
        };
        generator.adopt_first_grant()?;
        Ok(generator)
    }
}
