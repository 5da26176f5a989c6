package dev.fencing.jpa;

import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.Table;

/** Not fenced: the parent of {@link Pup}s, which the database deletes with it. */
@Entity
@Table(name = "kennel")
public class Kennel {
  @Id String id = "";

  protected Kennel() {}

  Kennel(String id) {
    this.id = id;
  }
}
