package dev.fencing.jpa;

import jakarta.persistence.Entity;
import jakarta.persistence.Table;

/** A {@link Vehicle} whose own columns are in a second table, {@code truck}. */
@Entity
@Table(name = "truck")
@Fenced(prefix = "vehicle:", attribute = "id")
public class Truck extends Vehicle {
  long load;

  protected Truck() {}

  Truck(String id, long load) {
    super(id);
    this.load = load;
  }
}
