package dev.flakery.compat.leaf;

/** Leaf's {@code com.sankuai.inf.leaf.common.Status}. */
public enum Status {
    /** The result holds an ID. */
    SUCCESS,
    /** No ID: the result's id is a negative error number. */
    EXCEPTION
}
