package dev.fencing.jpa;

import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.Table;

/**
 * Not fenced: the parent of {@link Foal}s, mapped with no database action; the test's own SQL (a
 * migration) declares the key's.
 */
@Entity
@Table(name = "barn")
public class Barn {
  @Id String id = "";

  protected Barn() {}

  Barn(String id) {
    this.id = id;
  }
}
