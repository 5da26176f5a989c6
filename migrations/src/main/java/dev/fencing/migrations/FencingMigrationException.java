package dev.fencing.migrations;

/** A migration, or the check of an applied schema, failed. The message names what is wrong. */
public final class FencingMigrationException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  FencingMigrationException(String message) {
    super(message);
  }

  FencingMigrationException(String message, Throwable cause) {
    super(message, cause);
  }
}
