// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.verbs;

/**
 * The one thread allowed to call an endpoint's objects (queue pairs, protection domains, the
 * endpoint itself), checked where they are called: the engine is single-threaded by design, and a
 * post from another thread corrupts its rings silently, so it fails here with a message instead.
 * Unset (no check) until a driver names the thread; the check is a reference comparison with the
 * current thread, cheap enough for every post.
 */
public final class OwningThread {
    private Thread owner;
    private String hint = "";

    /**
     * Names the owning thread; call it on that thread or before handing the endpoint to it.
     *
     * @param thread the owner, or null to stop checking
     * @param hint what a caller on another thread should do instead (appended to the error)
     */
    public void set(final Thread thread, final String hint) {
        this.owner = thread;
        this.hint = hint == null ? "" : hint;
    }

    /** @return the owning thread, or null when unchecked */
    public Thread get() {
        return owner;
    }

    /**
     * @param operation what is being called, for the message
     * @throws IllegalStateException when called on another thread than the owner
     */
    public void check(final String operation) {
        final Thread o = owner;
        if (o != null && Thread.currentThread() != o) {
            throw new IllegalStateException(operation + " called on thread '" + Thread.currentThread().getName()
                + "', but this endpoint is owned by thread '" + o.getName() + "', the only one that may call it"
                + (hint.isEmpty() ? "" : ": " + hint));
        }
    }
}
