/** flakery's Spring Boot auto-configuration (docs/java.md#spring-boot). */
package dev.flakery.spring;
