//! The "before" design, kept for comparison in tests and the
//! microbenchmark: InnoDB's classic ReadView (8.2.1). The active set is a
//! sorted `Vec<TxnId>` under one mutex; a view copies the whole vector
//! (8 bytes per active transaction) and probes it with a binary search;
//! closing a view takes the same mutex again (the double latch of 8.2.4).

use lockstep_txn::TxnId;
use parking_lot::Mutex;

#[derive(Default)]
struct Inner {
    next_id: TxnId,
    active: Vec<TxnId>,
    /// up_limit of every open view (multiset).
    views: Vec<TxnId>,
}

pub struct VecTxnSys {
    inner: Mutex<Inner>,
}

impl Default for VecTxnSys {
    fn default() -> Self {
        Self::new()
    }
}

impl VecTxnSys {
    pub fn new() -> Self {
        VecTxnSys {
            inner: Mutex::new(Inner {
                next_id: 1,
                ..Default::default()
            }),
        }
    }

    pub fn begin_rw(&self) -> TxnId {
        let mut g = self.inner.lock();
        let id = g.next_id;
        g.next_id += 1;
        g.active.push(id); // ids grow, so the vector stays sorted
        id
    }

    pub fn finish(&self, id: TxnId) {
        let mut g = self.inner.lock();
        if let Ok(p) = g.active.binary_search(&id) {
            g.active.remove(p);
        }
    }

    pub fn read_view(&self, creator: Option<TxnId>) -> VecReadView<'_> {
        let mut g = self.inner.lock();
        let ids = g.active.clone();
        let low_limit = g.next_id;
        let up_limit = ids.first().copied().unwrap_or(low_limit);
        g.views.push(up_limit);
        VecReadView {
            sys: self,
            creator: creator.unwrap_or(0),
            up_limit,
            low_limit,
            ids,
        }
    }

    pub fn purge_horizon(&self) -> TxnId {
        let g = self.inner.lock();
        let min_active = g.active.first().copied().unwrap_or(g.next_id);
        g.views.iter().copied().fold(min_active, TxnId::min)
    }
}

pub struct VecReadView<'a> {
    sys: &'a VecTxnSys,
    creator: TxnId,
    up_limit: TxnId,
    low_limit: TxnId,
    ids: Vec<TxnId>,
}

impl VecReadView<'_> {
    #[inline]
    pub fn sees(&self, id: TxnId) -> bool {
        if id < self.up_limit || id == self.creator {
            return true;
        }
        if id >= self.low_limit {
            return false;
        }
        self.ids.binary_search(&id).is_err()
    }

    pub fn low_limit(&self) -> TxnId {
        self.low_limit
    }

    pub fn up_limit(&self) -> TxnId {
        self.up_limit
    }
}

impl Drop for VecReadView<'_> {
    fn drop(&mut self) {
        let mut g = self.sys.inner.lock();
        if let Some(p) = g.views.iter().position(|&v| v == self.up_limit) {
            g.views.swap_remove(p);
        }
    }
}
