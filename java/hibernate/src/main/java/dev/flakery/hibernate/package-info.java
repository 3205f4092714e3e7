/** flakery's Hibernate identifier generator (docs/java.md#hibernate). */
package dev.flakery.hibernate;
