package dev.fencing.spring.boot.autoconfigure.app.jobs;

import jakarta.persistence.Entity;
import jakarta.persistence.Id;

/** An entity that is not {@code @Fenced}: fenced only by the token bound when it is written. */
@Entity
public class Tally {
  @Id private long id;
  private long count;

  protected Tally() {}

  public Tally(long id, long count) {
    this.id = id;
    this.count = count;
  }
}
