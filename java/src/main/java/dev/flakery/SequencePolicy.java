package dev.flakery;

/** What a generator does when a tick's sequence numbers are used up. */
public enum SequencePolicy {
    /** Wait for the next tick (the default). */
    WAIT("wait"),
    /** Use ticks ahead of the clock, at most {@code maxBorrowMs} ahead; then wait. */
    BORROW("borrow");

    private final String text;

    SequencePolicy(String text) {
        this.text = text;
    }

    /**
     * As docs/spec.md#generator-options writes it.
     *
     * @return {@code wait} or {@code borrow}
     */
    public String text() {
        return text;
    }
}
