package dev.flakery.compat.leaf;

/** Leaf's {@code com.sankuai.inf.leaf.IDGen}: code written against it changes only its import. */
public interface IDGen {
    /**
     * A new ID for {@code key}.
     *
     * @param key Leaf's business tag (its segment mode's {@code biz_tag})
     * @return the ID, or a negative number with {@link Status#EXCEPTION}
     */
    Result get(String key);

    /**
     * Leaf's start-up step.
     *
     * @return whether the generator is ready
     */
    boolean init();
}
