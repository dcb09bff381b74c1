package stagekit

import (
	"github.com/asynkron/protoactor-go/actor"

	"github.com/troupe-go/troupe/internal/mailbox"
)

// MailboxOf returns a stage's mailbox.
func MailboxOf[Req, Res any](s *Stage[Req, Res]) *mailbox.Mailbox { return s.mb }

// PIDOf returns a stage actor's PID.
func PIDOf[Req, Res any](s *Stage[Req, Res]) *actor.PID { return s.pid }

// SupervisorPID returns a host's supervisor actor's PID.
func SupervisorPID(h *Host) *actor.PID { return h.supervisorPID() }

// ForcedCollections reports how many collections the dropped-permit check
// has run in this process.
func ForcedCollections() int64 { return forcedCollections.Load() }
