package approvals

import (
	"path"
	"strings"
)

// throughLinks adds to the write and delete targets, for each target at or
// under a link the command itself makes (ln, ln -s), the place it reaches
// through that link. The link does not exist when the command is judged,
// so the target's path names a place in the project while the write lands
// where the link leads (ln -s ~/.local/share/ama l && touch
// l/sessions/x.jsonl wrote into ama's sessions; ln -s ~/.ssh k && cat
// key >> k/authorized_keys). Every verdict that reads the targets (ama's
// safety files, auto's protected and outside writes, plan) then judges
// both. A link whose target is only known at run time makes such a
// target dynamic. Over-approximates: a write before the ln counts too, and
// a link name that is an existing directory is taken both ways.
func (a *Analysis) throughLinks() {
	type link struct {
		name    string
		targets []string // "" : only known at run time
	}
	var links []link
	for i := range a.Segments {
		s := &a.Segments[i]
		if s.Name != "ln" {
			continue
		}
		opts, ops, _ := parseArgs(s.args, copySpec)
		add := func(name arg, target arg, dirOfLink string) {
			l := link{}
			if name.dyn || s.dir == "" {
				return // a dynamic link name: the writes through it are dynamic already
			}
			var ok bool
			if l.name, ok = joinPath(s.dir, name.val); !ok {
				return
			}
			if target.dyn {
				l.targets = []string{""}
			} else {
				for _, base := range []string{s.dir, path.Dir(l.name), dirOfLink} {
					if p, ok := joinPath(base, target.val); ok && base != "" {
						l.targets = append(l.targets, p)
					}
				}
			}
			links = append(links, l)
		}
		if d, ok := optVal(opts, "-t", "--target-directory"); ok {
			for _, t := range ops {
				add(arg{val: d.val + "/" + path.Base(t.val), dyn: d.dyn || t.dyn}, t, "")
			}
			continue
		}
		switch {
		case len(ops) == 1:
			add(arg{val: path.Base(ops[0].val), dyn: ops[0].dyn}, ops[0], "")
		case len(ops) >= 2:
			last := ops[len(ops)-1]
			for _, t := range ops[:len(ops)-1] {
				add(last, t, "")
				// last is a directory: the link is last/base(t).
				add(arg{val: last.val + "/" + path.Base(t.val), dyn: last.dyn || t.dyn}, t, "")
			}
		}
	}
	if len(links) == 0 {
		return
	}
	through := func(list []Target) []Target {
		out := list
		for _, t := range list {
			if t.Dynamic {
				continue
			}
			for _, l := range links {
				if !within(t.Path, l.name) {
					continue
				}
				rest := strings.TrimPrefix(t.Path, l.name)
				if rest == "" && t.Segment >= 0 && t.Segment < len(a.Segments) && a.Segments[t.Segment].Name == "ln" {
					continue // the link itself, not a write through it
				}
				for _, target := range l.targets {
					u := t
					u.joined = ""
					if target == "" {
						u.Path, u.Dynamic = "", true
					} else {
						u.Path = path.Clean(target + rest)
					}
					out = append(out, u)
				}
			}
		}
		return out
	}
	a.Writes = through(a.Writes)
	a.Deletes = through(a.Deletes)
}
