package dev.flakery;

import java.lang.ref.Cleaner;

/** The one {@link Cleaner} that frees native generators and layouts. */
final class Handles {
    static final Cleaner CLEANER = Cleaner.create();

    private Handles() {}
}
