package audit

import (
	"hash/maphash"
	"sort"
	"strconv"
	"sync"
)

// Within the denials' share (see denialShare) each denial is keyed by
// what it refused: its kind (deny: layer and what; quarantine: the rule;
// a net, dns or exec event with decision "deny": its type) and its target. The agent can cause some denials at will and as often
// as it likes (a blocked command in a loop, a connection retried, a
// protected file written again and again): without keys it spent the
// whole share with one of them, and a different, later denial -- the one
// that mattered -- was counted by type, not written (trail15). So, in
// the share:
//
//   - the first perKeyShare events of one key are written, later repeats
//     only counted (by key in the dropped events, the most repeated
//     first): a flood of one denial cannot hide another;
//   - one kind spends at most 1/kindShareDiv of the share: a flood of
//     distinct targets of one kind (a thousand names, each refused)
//     cannot hide a denial of another kind.
//
// A flood of distinct targets over every kind the agent can cause still
// runs the share out; the denials after it are then counted, by type and
// by key, as before: the trail says how many, not which. The ordinary
// part of the budget, before the share, keys nothing (every denial there
// is written).
const (
	perKeyShare  = 4
	kindShareDiv = 4
	// maxShareKeys bounds the key table (memory: a key is at most
	// maxKeyBytes). Past it a new key is counted in one of overflowSlots
	// (see shareKeys.over); what its kind has refused is said per kind
	// in the dropped events (Dropped.Others).
	maxShareKeys = 4096
	// overflowSlots: past the table, a key's count is a slot chosen by
	// its hash (one byte each, 64 KiB, made at the first key past the
	// table). Before, such a key had no bound of its own: 4,096 distinct
	// denials, then a flood of one new one, spent its kind's part, and a
	// later denial of that kind was counted, not written (trail17). The
	// hash is keyed with a seed of the writer's (maphash): the agent
	// cannot aim a flood at the slot of the denial it wants hidden; it
	// shares one by chance, 1 in 65,536 for a flood of one key. To fill
	// slots at will it must make perKeyShare denials of a slot's keys:
	// the whole default share (8 MiB of 64 MiB, ~31,000 denials) fills
	// about 1 slot in 700; budgets past ~500 MiB can fill them all,
	// which is the flood of distinct targets the share already cannot
	// stop (it is then said, not written).
	overflowSlots = 1 << 16
	maxKeyBytes   = 256
	// maxPendingKeys bounds the refused keys counted between two dropped
	// events; MaxDroppedKeys of them, the most repeated, are written.
	maxPendingKeys = 1024
)

// MaxDroppedKeys is the most keys a dropped event counts (Dropped.Keys).
const MaxDroppedKeys = 16

// denialKeyer is implemented by the events the denials' share is keyed
// for.
type denialKeyer interface {
	denialKey() (kind, key string)
}

func (d Deny) denialKey() (string, string) {
	kind := "deny " + d.Layer + "/" + d.What
	return kind, cutKey(kind + " " + d.Target)
}

func (q Quarantine) denialKey() (string, string) {
	kind := "quarantine " + q.Rule
	return kind, cutKey(kind + " " + q.Path)
}

// Refusals recorded as net, dns and exec events (decision "deny"; the
// proxy's have no deny event) are denials too: keyed, in the share.
func (n Net) denialKey() (string, string) {
	if n.Decision != DecisionDeny {
		return "", ""
	}
	target := n.Address
	if n.Name != "" {
		target = n.Name
	}
	return "net deny", cutKey("net deny " + target + ":" + strconv.Itoa(n.Port))
}

func (d DNS) denialKey() (string, string) {
	if d.Decision != DecisionDeny {
		return "", ""
	}
	return "dns deny", cutKey("dns deny " + d.Name)
}

func (e Exec) denialKey() (string, string) {
	if e.Decision != DecisionDeny {
		return "", ""
	}
	return "exec deny", cutKey("exec deny " + e.Path)
}

func cutKey(k string) string {
	if len(k) > maxKeyBytes {
		return k[:maxKeyBytes]
	}
	return k
}

// keyOf returns the denial kind and key of fields ("" for none).
func keyOf(fields any) (kind, key string) {
	switch f := fields.(type) {
	case Deny, Quarantine, Net, DNS, Exec:
		return f.(denialKeyer).denialKey()
	case *Deny:
		if f != nil {
			return f.denialKey()
		}
	case *Quarantine:
		if f != nil {
			return f.denialKey()
		}
	case *Net:
		if f != nil {
			return f.denialKey()
		}
	case *DNS:
		if f != nil {
			return f.denialKey()
		}
	case *Exec:
		if f != nil { // a typed nil: no fields, no key
			return f.denialKey()
		}
	}
	return "", ""
}

// shareKeys is the writer's key table for the denials' share.
type shareKeys struct {
	mu    sync.Mutex
	uses  map[string]int   // events written in the share, per key
	kinds map[string]int64 // bytes charged to the share, per kind
	// over counts the keys past maxShareKeys, by slot (overflowSlots);
	// seed keys the slot's hash.
	over []uint8
	seed maphash.Seed
}

// slot returns the overflow count of key (made at the first call).
func (s *shareKeys) slot(key string) *uint8 {
	if s.over == nil {
		s.over, s.seed = make([]uint8, overflowSlots), maphash.MakeSeed()
	}
	return &s.over[maphash.String(s.seed, key)%overflowSlots]
}

// admit charges an event of kind and key, est bytes, to the share and
// tells whether it may be written there; part is the share's bytes of
// one kind.
func (s *shareKeys) admit(kind, key string, est, part int64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.uses == nil {
		s.uses, s.kinds = map[string]int{}, map[string]int64{}
	}
	n, known := s.uses[key]
	var over *uint8
	if !known && len(s.uses) >= maxShareKeys {
		// No room in the table: the key's slot bounds it, so that a
		// flood of one key past the table cannot spend its kind's part.
		over = s.slot(key)
		n = int(*over)
	}
	if n >= perKeyShare {
		return false // a repeat: counted, so that the share stays for others
	}
	if s.kinds[kind]+est > part {
		return false // this kind's part is spent: the others keep theirs
	}
	if over != nil {
		*over++
	} else {
		s.uses[key] = n + 1
	}
	s.kinds[kind] += est
	return true
}

// release undoes admit for an event that was not queued after all.
func (s *shareKeys) release(kind, key string, est int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if n, ok := s.uses[key]; ok {
		if n > 0 {
			s.uses[key] = n - 1
		}
	} else if s.over != nil {
		if o := s.slot(key); *o > 0 {
			*o-- // admitted past the table
		}
	}
	s.kinds[kind] -= est
}

// refusedKeys counts the denials the budget refused since the last
// dropped event, by key (bounded: maxPendingKeys) and by kind (bounded:
// maxPendingKinds; kinds are jail's names, a few dozen). The dropped
// event names the most repeated keys (Keys) and says, per kind, what it
// does not name (Others): with 5,000 refused targets of one kind it named
// 16 and said nothing of the other 4,984 (trail16).
type refusedKeys struct {
	keys  map[string]*refusedKey
	other map[string]OtherKeys // events whose key the table had no room for
}

type refusedKey struct {
	kind string
	n    uint64
}

const (
	// maxPendingKinds bounds the kinds refusedKeys counts; past it they
	// are counted under otherKinds.
	maxPendingKinds = 64
	otherKinds      = "other kinds"
)

// add counts one refused denial of kind and key.
func (r *refusedKeys) add(kind, key string) {
	if r.keys == nil {
		r.keys, r.other = map[string]*refusedKey{}, map[string]OtherKeys{}
	}
	if k, ok := r.keys[key]; ok {
		k.n++
		return
	}
	if _, ok := r.other[kind]; !ok && len(r.other) >= maxPendingKinds {
		kind = otherKinds
	}
	o := r.other[kind] // made now: the kind is counted, and bounded
	if len(r.keys) < maxPendingKeys {
		r.keys[key] = &refusedKey{kind: kind, n: 1}
		r.other[kind] = o
		return
	}
	// No room for the key: its event is counted, its key is not.
	o.Events++
	o.Uncounted++
	r.other[kind] = o
}

// merge adds what o counted (a dropped event's whose write failed).
func (r *refusedKeys) merge(o refusedKeys) {
	if o.keys == nil {
		return
	}
	if r.keys == nil {
		r.keys, r.other = map[string]*refusedKey{}, map[string]OtherKeys{}
	}
	for key, k := range o.keys {
		if have, ok := r.keys[key]; ok {
			have.n += k.n
		} else {
			r.keys[key] = &refusedKey{kind: k.kind, n: k.n}
		}
	}
	for kind, x := range o.other {
		y := r.other[kind]
		y.Events += x.Events
		y.Uncounted += x.Uncounted
		r.other[kind] = y
	}
}

// take empties r and returns what a dropped event says of it: the most
// repeated keys, and per kind what they leave out; taken is r's content,
// for merge should the event not be written.
func (r *refusedKeys) take() (keys map[string]uint64, others map[string]OtherKeys, taken refusedKeys) {
	taken = *r
	*r = refusedKeys{}
	if taken.keys == nil {
		return nil, nil, taken
	}
	counts := make(map[string]uint64, len(taken.keys))
	for key, k := range taken.keys {
		counts[key] = k.n
	}
	keys = topKeys(counts)
	others = map[string]OtherKeys{}
	for kind, o := range taken.other {
		if o.Events > 0 {
			others[kind] = o
		}
	}
	for key, k := range taken.keys {
		if _, named := keys[key]; named {
			continue
		}
		o := others[k.kind]
		o.Keys++
		o.Events += k.n
		others[k.kind] = o
	}
	if len(others) == 0 {
		others = nil
	}
	return keys, others, taken
}

// topKeys returns at most MaxDroppedKeys of counts, the largest first
// (ties by key), or nil.
func topKeys(counts map[string]uint64) map[string]uint64 {
	if len(counts) <= MaxDroppedKeys {
		if len(counts) == 0 {
			return nil
		}
		return counts
	}
	keys := make([]string, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if counts[keys[i]] != counts[keys[j]] {
			return counts[keys[i]] > counts[keys[j]]
		}
		return keys[i] < keys[j]
	})
	out := make(map[string]uint64, MaxDroppedKeys)
	for _, k := range keys[:MaxDroppedKeys] {
		out[k] = counts[k]
	}
	return out
}
