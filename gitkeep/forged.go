package gitkeep

import (
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// ForgedLoose is the end's look at the loose objects the store keeps
// copies of: the workspace's file of each such id whose change time is at
// or after since (written in the run: in place, or deleted and made
// again) and that is not the object of its name (a link, or bytes that do
// not hash to the id). Why: git reads every pack (the alternates' too)
// before any loose object, so after the host's gc packed the agent's
// parentless commit under a loose commit's id, the store's true copy was
// hidden from `git fetch STORE` and the root commit was lost; inside, and
// on the host before that gc, git reads the forgery too (review18a). It
// returns the workspace paths of the forgeries and how many copies the
// deadline left unlooked at.
func ForgedLoose(store, gitDir string, since, deadline time.Time) (forged []string, left int, err error) {
	objs := filepath.Join(store, "objects")
	ents, err := os.ReadDir(objs)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, 0, nil
		}
		return nil, 0, fmt.Errorf("gitkeep: %w", err)
	}
	for _, e := range ents {
		d := e.Name()
		if len(d) != 2 || !isHex(d) || !e.IsDir() {
			continue
		}
		names, err := os.ReadDir(filepath.Join(objs, d))
		if err != nil {
			continue
		}
		for _, n := range names {
			id := d + n.Name()
			if !isID(id) {
				continue
			}
			if time.Now().After(deadline) {
				left++
				continue
			}
			p := filepath.Join(gitDir, "objects", d, n.Name())
			fi, err := os.Lstat(p)
			if err != nil {
				continue // gone (packed, or deleted: the copy is kept)
			}
			if _, ct, ok := linkInfo(fi); ok && ct < since.UnixNano() {
				continue
			}
			if !fi.Mode().IsRegular() {
				// Git follows a link to whatever it names.
				forged = append(forged, p)
				continue
			}
			if fi.Size() > 2*maxCopyObject {
				// Past what a copy's object takes deflated: the store
				// keeps such an id as a link only (said at its start).
				left++
				continue
			}
			want, _ := hex.DecodeString(id)
			b, err := readFile(p, 2*maxCopyObject)
			if err != nil {
				continue // unreadable: the user's git cannot read it either
			}
			if _, err := checkLoose(b, want); err != nil {
				forged = append(forged, p)
			}
		}
	}
	return forged, left, nil
}
