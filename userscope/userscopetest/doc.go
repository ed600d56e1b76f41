// Package userscopetest gives tests (of userscope and of the built jail
// binary) a private D-Bus session bus (dbus-daemon, Debian package
// dbus-daemon) and a fake systemd user manager on it: the Manager methods
// package userscope calls (Subscribe, StartTransientUnit, GetUnit), the
// JobRemoved signal, and the unit's org.freedesktop.DBus.Properties.Get for
// ControlGroup. It records every StartTransientUnit with its properties as
// they arrived on the wire.
package userscopetest
