package dev.fencing.jpa;

import jakarta.persistence.Entity;
import jakarta.persistence.Table;

/** A {@code JOINED} subclass of {@link Shed}, fenced with it. */
@Entity
@Table(name = "tool_shed")
public class ToolShed extends Shed {
  long tools;
}
