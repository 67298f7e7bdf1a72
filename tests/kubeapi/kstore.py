"""The object store: one global, monotonic resourceVersion (like etcd's
revision), a history of changes kept inside a window (what etcd compaction and
the watch cache keep), and the fan-out of changes to watchers."""

import collections
import copy
import threading


class Event:
    __slots__ = ('rv', 'key', 'type', 'ns', 'name', 'obj', 'prev')

    def __init__(self, rv, key, type_, ns, name, obj, prev):
        self.rv = rv
        self.key = key
        self.type = type_
        self.ns = ns
        self.name = name
        self.obj = obj
        self.prev = prev


class Watcher:
    """Receives the events of one storage key (optionally one namespace)."""

    def __init__(self, key, ns):
        self.key = key
        self.ns = ns
        self.cond = threading.Condition()
        self.events = collections.deque()
        self.closed = False         # ended by the server: finish the stream cleanly
        self.dropped = False        # connection to be cut without a clean end
        self.drop_after = None      # cut after this many more events sent
        self.sent = 0
        self.info = {}

    def push(self, ev):
        with self.cond:
            self.events.append(ev)
            self.cond.notify_all()

    def close(self, drop=False):
        with self.cond:
            if drop:
                self.dropped = True
            else:
                self.closed = True
            self.cond.notify_all()

    def wait(self, timeout):
        """Returns the next event, or None on timeout/close."""
        with self.cond:
            if not self.events and not self.closed and not self.dropped:
                self.cond.wait(timeout)
            if self.dropped:
                return None
            if self.events:
                return self.events.popleft()
            return None


class Store:
    def __init__(self, window=10000):
        self.lock = threading.RLock()
        self.changed = threading.Condition(self.lock)
        self.rv = 0
        self.objects = collections.defaultdict(dict)     # key -> {(ns, name): obj}
        self.uids = {}                                   # uid -> (key, ns, name)
        self.history = collections.deque()
        self.window = window          # most events kept
        self.floor = 0                # history holds every event with rv > floor
        self.key_floor = {}           # key -> rv when its watch cache started
        self.watchers = set()
        self.listeners = []           # callables(ev) run under the lock (controllers)

    # ------------------------------------------------------------ reads

    def current(self):
        with self.lock:
            return self.rv

    def get(self, key, ns, name):
        with self.lock:
            o = self.objects[key].get((ns or '', name))
            return copy.deepcopy(o) if o is not None else None

    def peek(self, key, ns, name):
        """The stored object itself (no copy): callers must hold the lock and
        not modify it."""
        return self.objects[key].get((ns or '', name))

    def items(self, key, ns=None):
        """Objects of key in etcd key order (namespace/name)."""
        with self.lock:
            objs = self.objects[key]
            out = [(k, v) for k, v in objs.items() if ns is None or k[0] == ns]
        out.sort(key=lambda kv: kv[0][0] + '/' + kv[0][1] if kv[0][0] else kv[0][1])
        return [copy.deepcopy(v) for _, v in out]

    def by_uid(self, uid):
        with self.lock:
            return self.uids.get(uid)

    def register_key(self, key):
        with self.lock:
            if key not in self.key_floor:
                self.key_floor[key] = self.rv

    def key_window_floor(self, key):
        with self.lock:
            return max(self.floor, self.key_floor.get(key, 0))

    def state_at(self, key, rv, ns=None):
        """The objects of key as they were at rv (rv >= floor)."""
        with self.lock:
            objs = {k: v for k, v in self.objects[key].items() if ns is None or k[0] == ns}
            for ev in reversed(self.history):
                if ev.rv <= rv:
                    break
                if ev.key != key or (ns is not None and ev.ns != ns):
                    continue
                k = (ev.ns, ev.name)
                if ev.type == 'ADDED':
                    objs.pop(k, None)
                else:
                    objs[k] = ev.prev
            out = sorted(objs.items(), key=lambda kv: kv[0][0] + '/' + kv[0][1] if kv[0][0] else kv[0][1])
            return [copy.deepcopy(v) for _, v in out]

    # ------------------------------------------------------------ writes

    def commit(self, key, ns, name, obj, type_):
        """Stores obj (ADDED/MODIFIED) or removes the object (DELETED), with a
        new resourceVersion. Returns the stored object (a copy)."""
        with self.lock:
            self.rv += 1
            rv = self.rv
            k = (ns or '', name)
            prev = self.objects[key].get(k)
            if type_ == 'DELETED':
                stored = copy.deepcopy(prev)
                stored['metadata']['resourceVersion'] = str(rv)
                del self.objects[key][k]
                uid = prev['metadata'].get('uid')
                if uid and self.uids.get(uid) == (key, ns or '', name):
                    del self.uids[uid]
            else:
                stored = copy.deepcopy(obj)
                stored['metadata']['resourceVersion'] = str(rv)
                self.objects[key][k] = stored
                uid = stored['metadata'].get('uid')
                if uid:
                    self.uids[uid] = (key, ns or '', name)
            ev = Event(rv, key, type_, ns or '', name, stored, prev)
            self.history.append(ev)
            self._trim()
            for w in list(self.watchers):
                if w.key == key and (w.ns is None or w.ns == (ns or '')):
                    w.push(ev)
            for fn in self.listeners:
                fn(ev)
            self.changed.notify_all()
            return copy.deepcopy(stored)

    def _trim(self):
        while len(self.history) > self.window:
            ev = self.history.popleft()
            self.floor = ev.rv

    def set_window(self, n):
        with self.lock:
            self.window = max(0, int(n))
            self._trim()

    def compact(self, rv=None):
        """Forget history up to rv (default: now), like an etcd compaction."""
        with self.lock:
            rv = self.rv if rv is None else min(int(rv), self.rv)
            while self.history and self.history[0].rv <= rv:
                self.history.popleft()
            self.floor = max(self.floor, rv)

    def events_since(self, key, rv, ns=None):
        with self.lock:
            return [ev for ev in self.history
                    if ev.rv > rv and ev.key == key and (ns is None or ev.ns == ns)]

    # ------------------------------------------------------------ watchers

    def add_watcher(self, w):
        with self.lock:
            self.watchers.add(w)

    def remove_watcher(self, w):
        with self.lock:
            self.watchers.discard(w)

    def wait_for_rv(self, rv, timeout):
        """Blocks until the store reaches rv; False on timeout."""
        import time
        deadline = time.monotonic() + timeout
        with self.lock:
            while self.rv < rv:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self.changed.wait(left)
            return True
