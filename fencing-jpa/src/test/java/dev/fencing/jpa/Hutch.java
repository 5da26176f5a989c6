package dev.fencing.jpa;

import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.Inheritance;
import jakarta.persistence.InheritanceType;
import jakarta.persistence.Table;

/** One resource per row (its identifier), {@code JOINED}: see {@link Cage}. */
@Entity
@Table(name = "hutch")
@Inheritance(strategy = InheritanceType.JOINED)
@Fenced(prefix = "hutch:", attribute = "id")
public class Hutch {
  @Id String id = "";

  protected Hutch() {}

  Hutch(String id) {
    this.id = id;
  }
}
