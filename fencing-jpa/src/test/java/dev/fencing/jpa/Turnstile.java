package dev.fencing.jpa;

import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.Table;
import jakarta.persistence.Version;

/** One resource for the whole table ({@code gates}), versioned. */
@Entity
@Table(name = "turnstile")
@Fenced("gates")
public class Turnstile {
  @Id String id = "";

  @Version long version;

  protected Turnstile() {}

  Turnstile(String id) {
    this.id = id;
  }
}
